# bench_log.awk: reads one servesim_engine_bench log and prints a line per measured
# row, for the maintainer tools that compare or tabulate the bench's figures
# (ab_engine_bench.sh, engine_targets.sh), so that they read the log one way:
#
#   NAME MEDIAN_S EVENTS RSS_MB
#
# NAME is "run" for a single run (its "wall time ... median" and "events" lines),
# else a system of the --policies table (its median_s and events columns), in the
# table's order. RSS_MB is the process's peak RSS, the same on every row; a missing
# figure prints as "?". Nothing is printed when the log has neither form (the caller
# says so). Usage: awk -f tools/bench_log.awk LOG
/^  wall time/ { for (i = 1; i <= NF; ++i) if ($i == "median") wall = $(i + 1) }
/^  events / { events = $2 }
/^  peak RSS/ { rss = $3 }
/^  system +min_s +median_s/ { table = 1; next }
table && NF >= 7 && $3 ~ /^[0-9.]+$/ && $NF ~ /^[0-9]+$/ { n++; name[n] = $1; med[n] = $3; ev[n] = $NF; next }
table { table = 0 }
END {
  r = (rss == "" ? "?" : rss)
  if (wall != "") print "run", wall, (events == "" ? "?" : events), r
  for (i = 1; i <= n; ++i) print name[i], med[i], ev[i], r
}
