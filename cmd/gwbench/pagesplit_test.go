package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// pageReference is the page as encoding/json decodes it (splitPage's own fallback): what splitPage must
// agree with.
func pageReference(b []byte) ([]string, eventsPage, error) {
	frames, meta, err := decodePage(b, nil)
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = string(f)
	}
	return out, meta, err
}

func checkSplit(t *testing.T, page string) {
	t.Helper()
	want, wantMeta, wantErr := pageReference([]byte(page))
	got, meta, err := splitPage([]byte(page), nil)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("page %q: err %v, encoding/json's %v", page, err, wantErr)
	}
	if err != nil || wantErr != nil {
		return
	}
	if len(got) != len(want) || meta != wantMeta {
		t.Fatalf("page %q: %d frames %+v, want %d %+v", page, len(got), meta, len(want), wantMeta)
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("page %q: frame %d = %s, want %s", page, i, got[i], want[i])
		}
	}
}

// Pages as the gateway writes them split into the frames encoding/json finds, brackets, braces, quotes and
// escapes inside strings included; other layouts fall back to encoding/json.
func TestSplitPage(t *testing.T) {
	frame := `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"a \"}]\\\" {[ \\\\"}},"_meta":{"gateway":{"seq":7}}}}`
	for _, page := range []string{
		`{"frames":[],"closed":false,"epoch":1,"headSeq":0,"lastSeq":0,"notes":null}` + "\n",
		`{"frames":[` + frame + `],"closed":false,"epoch":1,"headSeq":7,"lastSeq":7,"notes":null}` + "\n",
		`{"frames":[` + frame + `,` + frame + `,{"a":[1,{"b":"]"}]}],"closed":true,"epoch":2,"lastSeq":9}`,
		`{"lastSeq":3,"frames":[{"a":1}],"closed":false}`, // another order: encoding/json
		`{"frames":[ {"a":1} ],"lastSeq":1}`,              // spaces: encoding/json
		`{"frames":[{"a":"\u00e9"}],"lastSeq":1}`,
	} {
		checkSplit(t, page)
	}
	for _, bad := range []string{
		`{"frames":[{"a":1}`,          // cut after a frame
		`{"frames":[{"a":"\`,          // cut inside an escape
		`{"frames":[{"a":1}{"b":2}]}`, // no comma
		`{"frames":[{"a":1},]}`,       // a trailing comma
		`{"frames":[{"a":1}],}`,       // an empty tail
		`{"frames":[`,
	} {
		if fr, _, err := splitPage([]byte(bad), nil); err == nil {
			t.Errorf("page %q split into %q without an error", bad, fr)
		}
	}
}

// Two compact JSON objects, any content, split as encoding/json splits them.
func FuzzSplitPage(f *testing.F) {
	f.Add(`{"a":"]}\""}`, `{"b":[{}]}`, uint64(5), true)
	f.Add(`{}`, `{"x":"\\"}`, uint64(0), false)
	f.Fuzz(func(t *testing.T, a, b string, last uint64, closed bool) {
		for _, fr := range []string{a, b} {
			var c bytes.Buffer
			if json.Compact(&c, []byte(fr)) != nil || c.String() != fr || fr[0] != '{' {
				t.Skip("frames in the log are compact JSON objects")
			}
		}
		meta, _ := json.Marshal(map[string]any{"closed": closed, "lastSeq": last, "epoch": 1})
		page := `{"frames":[` + strings.Join([]string{a, b}, ",") + `],` + string(meta[1:])
		checkSplit(t, page)
	})
}

// Any bytes: no panic, and a valid page splits as encoding/json splits it.
func FuzzSplitPageBytes(f *testing.F) {
	f.Add([]byte(`{"frames":[{"a":"\\"}],"lastSeq":1}`))
	f.Add([]byte(`{"frames":[{"a":"\`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, meta, err := splitPage(b, nil)
		if err != nil || !json.Valid(b) {
			return
		}
		want, wantMeta, _ := pageReference(b)
		if len(got) != len(want) || meta != wantMeta {
			t.Fatalf("page %q: %q %+v, encoding/json %q %+v", b, got, meta, want, wantMeta)
		}
		for i := range got {
			if string(got[i]) != want[i] {
				t.Fatalf("page %q: frame %d %s, encoding/json %s", b, i, got[i], want[i])
			}
		}
	})
}
