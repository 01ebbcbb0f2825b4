package inproc

import (
	"testing"
	"testing/synctest"
)

func TestTrackerWaitsForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr Tracker
		if !tr.Enter() || !tr.Enter() {
			t.Fatal("Enter refused before CloseAndWait")
		}
		done := make(chan struct{})
		go func() {
			tr.CloseAndWait()
			close(done)
		}()
		synctest.Wait()
		if tr.Enter() {
			t.Fatal("Enter accepted while closing")
		}
		tr.Leave()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("CloseAndWait returned with work left")
		default:
		}
		tr.Leave()
		<-done
		if tr.Enter() {
			t.Fatal("Enter accepted after CloseAndWait")
		}
	})
}

func TestTrackerCloseWithoutWork(t *testing.T) {
	var tr Tracker
	tr.CloseAndWait() // must not block
	if tr.Enter() {
		t.Fatal("Enter accepted after CloseAndWait")
	}
}
