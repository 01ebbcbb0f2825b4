package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

// spin is `gwbench hog`: one thread that burns CPU until it is killed, as another tenant's build would.
func spin() {
	runtime.GOMAXPROCS(1)
	for {
	}
}

// startHogs starts n hog processes (one CPU each) and returns the function that kills them.
func startHogs(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command(self, "hog")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// withHogs runs a row with one hog process per CPU beside it: the latency of a gateway that shares its
// cores with someone else's work.
func withHogs(fn func() (flood, error)) (flood, error) {
	stop, err := startHogs(runtime.NumCPU())
	if err != nil {
		return flood{}, fmt.Errorf("hog: %w", err)
	}
	defer stop()
	return fn()
}
