package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

type microResult struct {
	Name        string  `json:"name"`
	NsPerOp     float64 `json:"nsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
}

var benchLine = regexp.MustCompile(`(?m)^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+[\d.]+ MB/s)?\s+([\d.]+) B/op\s+([\d.]+) allocs/op`)

// runMicro runs the translate micro-benchmarks with go test and parses their lines.
func runMicro(ctx context.Context, short bool) ([]microResult, error) {
	bt := "1s"
	if short {
		bt = "100ms"
	}
	out, err := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", bt, "./internal/translate/").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -bench: %v\n%s", err, out)
	}
	var res []microResult
	for _, m := range benchLine.FindAllStringSubmatch(string(out), -1) {
		ns, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseFloat(m[3], 64)
		a, _ := strconv.ParseFloat(m[4], 64)
		res = append(res, microResult{Name: m[1], NsPerOp: ns, BytesPerOp: b, AllocsPerOp: a})
	}
	return res, nil
}
