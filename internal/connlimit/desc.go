package connlimit

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// shedThresholds turns a descriptor limit (0 = RLIMIT_NOFILE, < 0 = none) into shedAt, the open descriptors
// from which idle connections are closed (an eighth of the limit stays free for agents' pipes, the store and
// new connections), and checkFrom, the open connections below which descriptors are not counted at all
// (connections alone are far from the limit; counting costs a directory read).
func shedThresholds(limit int) (shedAt, checkFrom int) {
	if limit == 0 {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
			return 0, 0
		}
		limit = int(rl.Cur)
	}
	if limit <= 0 {
		return 0, 0
	}
	return limit - limit/8, limit / 4
}

// openDescriptors counts the entries of /proc/self/fd; where it cannot be read, the connections open.
func openDescriptors(conns func() int) func() int {
	return func() int {
		f, err := os.Open("/proc/self/fd")
		if err != nil {
			return conns()
		}
		defer f.Close()
		names, err := f.Readdirnames(-1)
		if err != nil {
			return conns()
		}
		return len(names) - 1 // the directory's own descriptor
	}
}

// isDescriptorExhaustion reports accept's "too many open files", per process or system-wide.
func isDescriptorExhaustion(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// An estimate of the open descriptors serves recountEvery accepts, or recountAfter, before they are counted
// again. A count reads the whole of /proc/self/fd (12–16 ms for 11 000 descriptors on this machine), so a
// count on every accept made each new connection wait for every open one.
const (
	recountEvery = 64
	recountAfter = time.Second
)

// descEstimate is the open descriptors at the last count and how the listener's connections moved since: the
// connections are what changes fast, the other descriptors (agents' pipes, the store) move slowly. Accept's
// goroutine owns it.
type descEstimate struct {
	counted int       // descriptors at the last count; 0 = none since the connections were last below checkFrom
	openAt  int       // the listener's open connections then
	at      time.Time // when
	uses    int       // accepts that used this count
}

// shedNearLimit closes idle connections, longest idle first, while the process's open descriptors are at or
// over shedAt: a keep-alive nobody uses gives way before accept fails for a client with work to do. The
// descriptors are counted every recountEvery accepts or recountAfter, and estimated from the connections in
// between. now is the accept's time.
func (l *limitListener) shedNearLimit(now time.Time) {
	if l.shedAt <= 0 {
		return
	}
	open := l.openConns()
	if open < l.checkFrom {
		l.desc = descEstimate{}
		return
	}
	if l.desc.counted == 0 || l.desc.uses >= recountEvery || now.Sub(l.desc.at) >= recountAfter {
		l.desc = descEstimate{counted: l.lim.OpenDescriptors(), openAt: open, at: now}
	}
	l.desc.uses++
	if over := l.desc.counted + open - l.desc.openAt - l.shedAt + 1; over > 0 {
		l.shedIdle(over)
	}
}

// shedIdle closes up to n idle connections, longest idle first, and returns how many it closed.
func (l *limitListener) shedIdle(n int) int {
	var victims []*limitConn
	l.mu.Lock()
	for len(victims) < n && l.idle.Len() > 0 {
		c := l.idle.Front().Value.(*limitConn)
		l.leaveIdleLocked(c)
		victims = append(victims, c)
	}
	l.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	return len(victims)
}
