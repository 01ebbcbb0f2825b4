package sessions

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
		l := newTerminalLog(sink.emit, 1000, 8, 50*time.Millisecond)
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
		l := newTerminalLog(sink.emit, 20, 8, 50*time.Millisecond)
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
