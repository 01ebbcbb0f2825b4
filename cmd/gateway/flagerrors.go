package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// usageHint follows every configuration error: the usage itself is printed only for --help, so the error stays
// on the screen instead of scrolling away above 160 lines of flags.
const usageHint = "run 'gateway --help' for usage"

// configError is a configuration the gateway refuses to start with: main prints it with usageHint and exits 2.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// exitCode prints the error run stopped with and returns the process's exit code: 2 for a configuration it
// refused (with a hint at --help), 1 for any other failure.
func exitCode(err error, stderr io.Writer) int {
	if errors.As(err, new(configError)) {
		fmt.Fprintf(stderr, "gateway: %v\n%s\n", err, usageHint)
		return 2
	}
	fmt.Fprintln(stderr, "gateway:", err)
	return 1
}

// badValue is the last value a flag refused, kept so the error names the flag, the value and what it wants
// rather than the flag package's "invalid value … for flag -x: parse error".
type badValue struct {
	flag, value string
	err         error
}

// hinted makes a flag's parse errors say what it wants ("want a duration like 300ms") instead of the flag
// package's "parse error", on the command line and in GATEWAY_* variables alike, and records the refusal.
type hinted struct {
	flag.Value
	name string
	want string    // "" keeps the value's own error
	last *badValue // shared by every flag of the set
}

func (h hinted) Set(v string) error {
	err := h.Value.Set(v)
	if err == nil {
		return nil
	}
	if h.want != "" {
		err = errors.New(h.want)
	}
	if h.last != nil {
		*h.last = badValue{flag: h.name, value: v, err: err}
	}
	return err
}

// String is also called by the flag package on a zero hinted (to spot default values).
func (h hinted) String() string {
	if h.Value == nil {
		return ""
	}
	return h.Value.String()
}

// IsBoolFlag keeps `--redact` (no value) working for wrapped bool flags.
func (h hinted) IsBoolFlag() bool {
	b, ok := h.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// addHints wraps every flag in hinted, with the shape of the value wanted for those that have one
// (durations, numbers, sizes, booleans). It returns where the last refused value is recorded.
func addHints(fs *flag.FlagSet) *badValue {
	last := &badValue{}
	fs.VisitAll(func(f *flag.Flag) {
		f.Value = hinted{Value: f.Value, name: f.Name, want: wantOf(f.Value), last: last}
	})
	return last
}

// wantOf says what shape of value a flag takes, or "" for free text.
func wantOf(v flag.Value) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration like 300ms, 15s or 2m"
	case int:
		return "want a whole number like 64"
	case int64: // every int64 flag is a size
		return "want a number of bytes like 1048576 (1 MiB)"
	case bool:
		return "want true or false"
	case float64:
		return "want a number like 50 or 0.5"
	}
	return ""
}

// flagError rewrites an error of flag.FlagSet.Parse in the gateway's words: the flag with its two dashes,
// the value given and what it wants.
func flagError(err error, last *badValue) error {
	msg := err.Error()
	switch {
	case last.flag != "" && (strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value ")):
		return fmt.Errorf("--%s %q: %v", last.flag, last.value, last.err)
	case strings.HasPrefix(msg, "flag provided but not defined: -"):
		return fmt.Errorf("unknown flag --%s", strings.TrimPrefix(msg, "flag provided but not defined: -"))
	case strings.HasPrefix(msg, "flag needs an argument: -"):
		return fmt.Errorf("--%s needs a value", strings.TrimPrefix(msg, "flag needs an argument: -"))
	}
	return err
}
