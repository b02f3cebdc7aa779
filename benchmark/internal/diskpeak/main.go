// Command diskpeak runs a command with its temporary files under one
// directory and reports the most disk space that directory took while the
// command ran, so that a benchmark run states what it needs:
//
//	go run ./benchmark/internal/diskpeak -dir /tmp/strata-bench -- make bench-groups
//
// The directory is emptied first and removed afterwards. The command gets
// TMPDIR and STRATA_BENCH_DIR set to it (so testing's TempDir, os.MkdirTemp
// and the benchmarks' directories all land there) and GOTMPDIR set to the
// former temporary directory, so that the go command's build files do not
// count. The space is the blocks allocated to the files under it, a file
// with several links counted once, sampled every -interval; the exit status
// is the command's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "strata-bench"), "directory for the command's files")
	interval := flag.Duration("interval", 250*time.Millisecond, "how often to measure the directory")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: diskpeak [-dir DIR] [-interval D] -- command [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(*dir, *interval, flag.Args()))
}

func run(dir string, interval time.Duration, args []string) int {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "diskpeak:", err)
		return 1
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "diskpeak:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "STRATA_BENCH_DIR="+dir, "GOTMPDIR="+os.TempDir())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "diskpeak:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var peak int64
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			peak = max(peak, usage(dir))
		}
	}
	fmt.Printf("=== %s took %s; peak disk use under %s: %.1f MiB (sampled every %s)\n",
		filepath.Base(args[0]), time.Since(start).Round(time.Second), dir, float64(peak)/(1<<20), interval)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "diskpeak:", err)
		return 1
	}
	return 0
}
