package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// processContext is the gateway process's context, ended by SIGINT or SIGTERM. SIGHUP never ends it: run
// reloads the users file and the TLS pair on it, and with neither configured it changes nothing (a service
// manager's reload must not stop the gateway).
func processContext() (context.Context, context.CancelFunc) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
		}
	}()
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// onSIGHUP calls reload on every SIGHUP until the returned stop is called (which waits for the watcher).
func onSIGHUP(reload func()) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-hup:
				reload()
			case <-quit:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(quit)
		<-done
	}
}
