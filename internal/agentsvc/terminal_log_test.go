package agentsvc

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type loggedFrame struct {
	data      string
	truncated bool
}

type frameSink struct {
	mu     sync.Mutex
	frames []loggedFrame
}

func (f *frameSink) emit(data string, truncated bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frames = append(f.frames, loggedFrame{data, truncated})
}

func (f *frameSink) get() []loggedFrame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]loggedFrame(nil), f.frames...)
}

// TestTerminalLogCoalesces: small reads wait up to the interval and go out as one frame; a full frame goes
// out at once; close logs the rest.
func TestTerminalLogCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink frameSink
		l := newTerminalLog(sink.emit, 1000, 16, 8, 50*time.Millisecond)
		l.add("a")
		l.add("b")
		l.add("c")
		synctest.Wait()
		if got := sink.get(); len(got) != 0 {
			t.Fatalf("frames before the interval: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		if got := sink.get(); len(got) != 1 || got[0].data != "abc" {
			t.Fatalf("after the interval: %+v", got)
		}
		l.add("0123456789") // past a full frame: out at once, in frames of at most 8 bytes
		if got := sink.get(); len(got) != 3 || got[1].data != "01234567" || got[2].data != "89" {
			t.Fatalf("full frame: %+v", got)
		}
		l.add("z")
		l.close()
		l.add("late")
		time.Sleep(time.Second)
		synctest.Wait()
		if got := sink.get(); len(got) != 4 || got[3].data != "z" {
			t.Fatalf("close: %+v", got)
		}
	})
}

// TestTerminalLogBudget: past the budget no more output is logged, only one truncated note.
func TestTerminalLogBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink frameSink
		l := newTerminalLog(sink.emit, 20, 0, 8, 50*time.Millisecond)
		for range 100 {
			l.add("xyz")
		}
		time.Sleep(time.Second)
		l.add("more")
		l.close()
		got := sink.get()
		logged, notes := 0, 0
		for i, f := range got {
			logged += len(f.data)
			if f.truncated {
				notes++
				if f.data != "" || i != len(got)-1 {
					t.Fatalf("note %d of %d: %+v", i, len(got), f)
				}
			}
		}
		if notes != 1 || logged > 20 || logged < 20-8 || strings.Trim(got[0].data, "xyz") != "" {
			t.Fatalf("logged %d bytes, %d notes: %+v", logged, notes, got)
		}
	})
}

// TestTerminalLogTailAtEnd: output past the budget is not logged as it comes, but its last tailMax bytes are
// when the output ends (close), the first of those frames `truncated` when output before them was left out:
// what a client saw last, and what a snapshot folds, is the command's latest output.
func TestTerminalLogTailAtEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink frameSink
		l := newTerminalLog(sink.emit, 20, 12, 8, 50*time.Millisecond)
		for i := range 100 {
			l.add(strings.Repeat("é", i%3) + "line" + string(rune('a'+i%26)) + "\n")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		before := len(sink.get())
		l.add("the end\n")
		l.close()
		got := sink.get()
		tail := got[before:]
		var text strings.Builder
		for i, f := range tail {
			if f.truncated != (i == 0) {
				t.Fatalf("tail frame %d of %+v", i, tail)
			}
			text.WriteString(f.data)
		}
		if text.String() != "nev\nthe end\n" {
			t.Fatalf("tail %q, want the last 12 bytes of the output", text.String())
		}
		if last := got[before-1]; last.data != "" || !last.truncated {
			t.Fatalf("before the end: %+v, want the budget's note last", got[:before])
		}

		// Output past the budget that fits the tail is logged whole, with no gap to mark.
		var sink2 frameSink
		l2 := newTerminalLog(sink2.emit, 20, 100, 8, 50*time.Millisecond)
		l2.add(strings.Repeat("x", 20))
		l2.add("yz")
		l2.close()
		got2 := sink2.get()
		if n := len(got2); n != 5 || got2[3].data != "" || !got2[3].truncated || got2[4] != (loggedFrame{"yz", false}) {
			t.Fatalf("frames %+v", got2)
		}
	})
}
