package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromVCSStamp(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202060000-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-02T06:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	got := from(bi, "", "", "")
	if got.Version != "v0.0.0-20261202060000-0123456789ab+dirty" || got.Commit != "0123456789abcdef-dirty" || got.Date != "2026-12-02T06:00:00Z" {
		t.Fatalf("from the VCS stamp: %+v", got)
	}
}

func TestFromLdflagsWin(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "aaaa"}}}
	got := from(bi, "v1.2.3", "bbbb", "2026-01-01T00:00:00Z")
	if got.Version != "v1.2.3" || got.Commit != "bbbb" || got.Date != "2026-01-01T00:00:00Z" {
		t.Fatalf("-X values: %+v", got)
	}
}

func TestFromNothing(t *testing.T) {
	got := from(nil, "", "", "")
	if got.Version != "dev" || got.Commit != Unknown || got.Date != Unknown || got.GoVersion == "" {
		t.Fatalf("no stamp: %+v", got)
	}
	if got := from(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", ""); got.Version != "dev" {
		t.Fatalf("(devel) is not a version: %+v", got)
	}
}
