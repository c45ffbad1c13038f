// The HTML report in a real browser: runs a small sweep with repetitions,
// writes `servesim report`, then loads the page in headless Chromium
// (Debian's `chromium`, installed by the README's set-up): a screenshot must
// come out, the rendered DOM must hold the summary table and the inline SVG
// plots, and the page must log no console error. Not doctest: where no
// browser (or no gnuplot) is installed it prints why and exits 77, which
// CTest reports as "Skipped" (SKIP_RETURN_CODE), never as passed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

std::string find_program(const char* const* names) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    for (const char* const* n = names; *n; ++n) {
      const fs::path p = fs::path(dir) / *n;
      if (access(p.c_str(), X_OK) == 0) return p.string();
    }
  return {};
}

int run(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

}  // namespace

int main() {
  static const char* const browsers[] = {"chromium", "chromium-browser", "google-chrome", nullptr};
  static const char* const gnuplots[] = {"gnuplot", nullptr};
  const std::string browser = find_program(browsers);
  if (browser.empty()) {
    std::printf("SKIPPED: no headless browser (chromium) installed; the README's set-up installs Debian's chromium\n");
    return 77;
  }
  if (find_program(gnuplots).empty()) {
    std::printf("SKIPPED: no gnuplot installed (the report's plots need it; the README's set-up installs it)\n");
    return 77;
  }
  const fs::path d = fs::temp_directory_path() / ("servesim_report_browser_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "s.yaml") << "name: browser_check\nbase: " << SERVESIM_SOURCE_DIR
                              << "/configs/scenarios/default.yaml\nset: {workload.requests: 300}\n"
                                 "grid: {policy.global: [round_robin, least_outstanding]}\nrepeat: 2\n";
  const std::string bin = SERVESIM_BIN;
  check(run(bin + " sweep " + (d / "s.yaml").string() + " --jobs 2 --out " + (d / "sweep").string() +
            " >/dev/null 2>&1") == 0,
        "the sweep runs");
  const fs::path html = d / "report.html";
  check(run(bin + " report " + (d / "sweep").string() + " -o " + html.string() + " >/dev/null 2>&1") == 0,
        "servesim report writes the page");
  const std::string page = slurp(html);
  // Self-contained: nothing fetched (SVG's xmlns names are identifiers, not fetched).
  bool fetches = page.find("<script") != std::string::npos || page.find("@import") != std::string::npos ||
                 page.find("url(http") != std::string::npos || page.find("<link") != std::string::npos;
  for (const char* attr : {"src=\"", "src='", "href=\"http", "href='http"})
    if (page.find(attr) != std::string::npos) fetches = true;
  check(!fetches, "the page is self-contained (no script, stylesheet link, or remote source)");
  const std::string flags = " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
                            "--hide-scrollbars --window-size=1366,900 --enable-logging=stderr --v=0 ";
  const std::string url = "file://" + html.string();
  const fs::path shot = d / "shot.png", dom = d / "dom.html", log1 = d / "shot.log", log2 = d / "dom.log";
  check(run(browser + flags + "--screenshot=" + shot.string() + " " + url + " >/dev/null 2>" + log1.string()) == 0,
        "chromium renders the page");
  check(fs::exists(shot) && fs::file_size(shot) > 20000, "the screenshot is an image with content (" +
                                                              std::to_string(fs::exists(shot) ? fs::file_size(shot) : 0) +
                                                              " bytes)");
  check(run(browser + flags + "--dump-dom " + url + " >" + dom.string() + " 2>" + log2.string()) == 0,
        "chromium dumps the rendered DOM");
  const std::string rendered = slurp(dom);
  check(rendered.find("<table id=\"summary\"") != std::string::npos, "the summary table is in the rendered page");
  check(rendered.find("<table id=\"versus\"") != std::string::npos, "the comparison against the baseline is there");
  check(count(rendered, "<svg") >= 5, "the plots are inline SVG (" + std::to_string(count(rendered, "<svg")) + ")");
  check(rendered.find("least_outstanding") != std::string::npos, "the configurations are named by policy");
  const std::string logs = slurp(log1) + slurp(log2);
  bool console_error = false;
  std::stringstream lines(logs);
  for (std::string line; std::getline(lines, line);)
    if (line.find("CONSOLE") != std::string::npos &&
        (line.find("rror") != std::string::npos || line.find("Uncaught") != std::string::npos)) {
      console_error = true;
      std::printf("  console: %s\n", line.c_str());
    }
  check(!console_error, "no console error while loading the page");
  std::printf("screenshot: %s\n", shot.c_str());
  if (failures == 0) fs::remove_all(d);
  return failures == 0 ? 0 : 1;
}
