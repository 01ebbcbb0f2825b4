package demo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken") }

func TestWatchWriterFiresAfterMatchingWrite(t *testing.T) {
	var buf bytes.Buffer
	ww := newWatchWriter(&buf)
	ch := ww.watch(`"sessionId":"demo_1"`)
	if _, err := ww.Write([]byte(`{"sessionId":"demo_2"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if closed(ch) {
		t.Fatal("fired on a write without the marker")
	}
	if _, err := ww.Write([]byte(`{"result":{"sessionId":"demo_1"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if !closed(ch) {
		t.Fatal("did not fire on the matching write")
	}
	if !strings.Contains(buf.String(), "demo_1") {
		t.Fatal("data not passed through")
	}
	// A second matching write must not close the channel again (panic).
	if _, err := ww.Write([]byte(`{"sessionId":"demo_1"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestWatchWriterIgnoresFailedWrites(t *testing.T) {
	ww := newWatchWriter(failingWriter{})
	ch := ww.watch("x")
	if _, err := ww.Write([]byte("x")); err == nil {
		t.Fatal("error not passed through")
	}
	if closed(ch) {
		t.Fatal("fired although nothing reached the peer")
	}
	ww.unwatch("x")
	if len(ww.watches) != 0 {
		t.Fatal("unwatch left the watch behind")
	}
}
