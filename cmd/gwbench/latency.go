package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printLatency is the paced rows' breakdown: what the gateway adds to the direct path's latency, on quiet
// cores and beside one CPU hog per core, with the gateway's GC cycles and pauses during its row.
func printLatency(w io.Writer, res *Results) {
	rate := res.Config["rate"]
	byName := map[string]Row{}
	for _, r := range res.Rows {
		byName[r.Name] = r
	}
	fmt.Fprintf(w, "\nlatency at %v updates/s (medians over runs)\n", rate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tdirect p50 ms\tdirect p99 ms\tgateway p50 ms\tgateway p99 ms\tadded p50 ms\tadded p99 ms\tgateway GCs\tGC pauses ms\t")
	for _, c := range []struct{ label, suffix, ratio string }{{"quiet", "", "gateway_paced_added_p99_ms"}, {"CPU hog per core", " + hog", "gateway_paced_hog_added_p99_ms"}} {
		d, okD := byName[fmt.Sprintf("direct paced %v/s%s", rate, c.suffix)]
		g, okG := byName[fmt.Sprintf("gateway ws x1 paced %v/s%s", rate, c.suffix)]
		if !okD || !okG || len(d.Runs) == 0 || len(g.Runs) == 0 {
			continue
		}
		dm, gm := d.Median, g.Median
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.label, fmtF(dm.P50ms, 3), fmtF(dm.P99ms, 3), fmtF(gm.P50ms, 3), fmtF(gm.P99ms, 3),
			fmtF(gm.P50ms-dm.P50ms, 3), fmtF(res.Ratios[c.ratio], 3), fmtF(gm.GCs, 0), fmtF(gm.GCPauseMs, 2))
	}
	tw.Flush()
}
