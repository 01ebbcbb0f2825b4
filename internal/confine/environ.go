package confine

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ScrubEnviron overwrites the process's initial environment block with NULs, so /proc/<pid>/environ no
// longer shows the secrets it was started with (GATEWAY_TOKEN and the like). Go copied the environment at
// start (os.Getenv reads the copy), so nothing of the gateway's changes. It is needed because on some kernels
// a Landlock-confined process of the same uid can still read another process's environ (seen on 6.18).
func ScrubEnviron() error {
	if runtime.GOOS != "linux" {
		return nil // no /proc/<pid>/environ to read it from
	}
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return fmt.Errorf("/proc/self/stat: no command name")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); env_start and env_end are fields 50 and 51
	if len(f) < 49 {
		return fmt.Errorf("/proc/self/stat: %d fields, want env_start and env_end", len(f)+2)
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || end < start {
		return fmt.Errorf("/proc/self/stat: bad env_start/env_end %q %q", f[47], f[48])
	}
	if end == start {
		return nil
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	_, err = mem.WriteAt(make([]byte, end-start), start)
	return err
}
