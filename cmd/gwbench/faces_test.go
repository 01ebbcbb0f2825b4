package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The SSE reader returns each `data:` payload whole, also when a frame is longer than its read buffer, and
// skips ids, comments and blank lines.
func TestSSEFaceReadsDataLines(t *testing.T) {
	long := `{"x":"` + strings.Repeat("a", 200) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, ": heartbeat\n\nid: 1\ndata: {\"a\":1}\n\ndata: %s\r\n\nid: 2\ndata: {\"b\":2}\n\n", long)
	}))
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &sseFace{body: resp.Body, br: bufio.NewReaderSize(resp.Body, 16)}
	defer f.close()
	for _, want := range []string{`{"a":1}`, long, `{"b":2}`} {
		b, err := f.next(context.Background())
		if err != nil {
			t.Fatalf("next: %v (want %s)", err, want)
		}
		if string(b) != want {
			t.Fatalf("next = %s, want %s", b, want)
		}
	}
	if _, err := f.next(context.Background()); err == nil {
		t.Fatal("next after the stream's end: no error")
	}
}

// The page reader follows lastSeq from page to page and ends on a closed, empty page.
func TestPageFaceFollowsLastSeq(t *testing.T) {
	var afters []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		afters = append(afters, q.Get("after"))
		if q.Get("limit") != "1000" || q.Get("wait") == "" {
			http.Error(w, "want limit=1000 and wait", http.StatusBadRequest)
			return
		}
		switch q.Get("after") {
		case "0":
			fmt.Fprint(w, `{"frames":[{"s":1},{"s":2}],"lastSeq":2,"closed":false}`)
		case "2":
			fmt.Fprint(w, `{"frames":[{"s":3}],"lastSeq":3,"closed":false}`)
		default:
			fmt.Fprint(w, `{"frames":[],"lastSeq":3,"closed":true}`)
		}
	}))
	defer srv.Close()
	defer httpc.CloseIdleConnections()
	f := &pageFace{g: &gatewayProc{base: srv.URL}, id: "s1"}
	var got []string
	for {
		b, err := f.next(context.Background())
		if err != nil {
			break
		}
		got = append(got, string(b))
	}
	if strings.Join(got, ",") != `{"s":1},{"s":2},{"s":3}` || strings.Join(afters, ",") != "0,2,3" {
		t.Fatalf("frames %v after %v", got, afters)
	}
}
