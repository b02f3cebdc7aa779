//go:build linux

package main

import (
	"os"
	"syscall"
)

// peakRSS returns a finished child's peak resident memory in MiB: Linux
// reports ru_maxrss in KiB.
func peakRSS(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024
	}
	return 0
}

// diskWritten returns what a finished child caused the disk to write, in
// MiB: Linux reports ru_oublock in 512-byte blocks.
func diskWritten(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Oublock) * 512 / (1 << 20)
	}
	return 0
}
