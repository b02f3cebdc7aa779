//go:build linux

package simpledb

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

var fsMatrix = flag.Bool("fs-matrix", false, "run TestFilesystemMatrix: needs root, loop devices, mkfs.ext4, mkfs.xfs and mkfs.btrfs (make fs-matrix)")

// TestFilesystemMatrix runs the same faults against a database on each of
// ext4, XFS, btrfs and tmpfs, each a small loop-mounted image (tmpfs: a
// small mount), with the database in a child process, so that a signal
// that kills it (SIGBUS from a mapped file) is a failed cell rather than
// the end of the test:
//
//   - disk full during unsynced writes, during synced writes, during a
//     flush and during a compaction; then space freed. Every fault must be
//     an error the child sees, writes must resume without a reopen once
//     space is back, and the closed database must hold every acknowledged
//     write;
//   - the filesystem shut down (ext4 and XFS: the going-down ioctl without
//     flushing the journal, as xfstests approximates a power loss) at
//     random moments of synced writes, rotations, flushes and
//     compactions; then unmounted and mounted again. Every synced write
//     acknowledged before must be there;
//   - the child killed with SIGKILL at random moments. Every acknowledged
//     write must be there, unsynced ones too.
//
// After each, Verify must report no damage and Open must open. It prints a
// table, filesystem by fault, of the outcomes. It runs only with
// -fs-matrix, as root: make fs-matrix.
func TestFilesystemMatrix(t *testing.T) {
	if !*fsMatrix {
		t.Skip("run with -fs-matrix (make fs-matrix)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make and mount filesystems")
	}
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	faults := []struct {
		name string
		run  func(t *testing.T, m *mountedFS, rng *rand.Rand) string
	}{
		{"disk full, unsynced writes", func(t *testing.T, m *mountedFS, _ *rand.Rand) string { return fillCell(t, m, "unsynced") }},
		{"disk full, synced writes", func(t *testing.T, m *mountedFS, _ *rand.Rand) string { return fillCell(t, m, "synced") }},
		{"disk full, during a flush", func(t *testing.T, m *mountedFS, _ *rand.Rand) string { return fillCell(t, m, "flush") }},
		{"disk full, during a compaction", func(t *testing.T, m *mountedFS, _ *rand.Rand) string { return fillCell(t, m, "compaction") }},
		{"shut down, 5 random moments", shutdownCell},
		{"SIGKILL, 5 random moments", killCell},
	}
	outcomes := map[[2]string]string{}
	var names []string
	for _, fsys := range matrixFilesystems {
		names = append(names, fsys.name)
		if fsys.mkfs != nil {
			if _, err := exec.LookPath(fsys.mkfs[0]); err != nil {
				t.Logf("%s: %s missing: skipped (make fs-matrix installs it)", fsys.name, fsys.mkfs[0])
				continue
			}
		}
		for _, f := range faults {
			t.Run(fsys.name+"/"+f.name, func(t *testing.T) {
				m := mountFS(t, fsys)
				defer m.unmount(t)
				outcome := f.run(t, m, rng)
				if t.Failed() {
					outcome = "FAILED: " + outcome
				}
				outcomes[[2]string{fsys.name, f.name}] = outcome
			})
		}
	}
	t.Log("| fault | " + strings.Join(names, " | ") + " |")
	t.Log("|---" + strings.Repeat("|---", len(names)) + "|")
	for _, f := range faults {
		row := "| " + f.name + " |"
		for _, name := range names {
			row += " " + outcomes[[2]string{name, f.name}] + " |"
		}
		t.Log(row)
	}
}

// matrixFS is a filesystem of the matrix: how to make one, and whether it
// can be shut down.
type matrixFS struct {
	name     string
	mkfs     []string // nil: tmpfs, no image
	shutdown bool
}

var matrixFilesystems = []matrixFS{
	{"ext4", []string{"mkfs.ext4", "-q", "-F"}, true},
	{"XFS", []string{"mkfs.xfs", "-q", "-f"}, true},
	{"btrfs", []string{"mkfs.btrfs", "-q", "-f"}, false},
	{"tmpfs", nil, false},
}

// matrixImageSize is each image's size: XFS's smallest.
const matrixImageSize = 320 << 20

// mountedFS is a filesystem of the matrix, mounted.
type mountedFS struct {
	matrixFS
	image, dir string
}

func mountFS(t *testing.T, fsys matrixFS) *mountedFS {
	t.Helper()
	tmp := t.TempDir()
	m := &mountedFS{matrixFS: fsys, image: filepath.Join(tmp, "image"), dir: filepath.Join(tmp, "mnt")}
	require.NoError(t, os.Mkdir(m.dir, 0o755))
	if fsys.mkfs != nil {
		f, err := os.Create(m.image)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(matrixImageSize))
		require.NoError(t, f.Close())
		run(t, append(fsys.mkfs, m.image)...)
	}
	m.mount(t)
	return m
}

func (m *mountedFS) mount(t *testing.T) {
	t.Helper()
	if m.mkfs == nil {
		run(t, "mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", matrixImageSize), "tmpfs", m.dir)
		return
	}
	run(t, "mount", "-o", "loop", m.image, m.dir)
}

func (m *mountedFS) unmount(t *testing.T) {
	t.Helper()
	run(t, "umount", m.dir)
}

// run runs a command, failing t with its output if it fails.
func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
}

// goingDown is XFS_IOC_GOINGDOWN (ext4's EXT4_IOC_SHUTDOWN is the same
// number), and goingDownNoLogFlush its flag that shuts the filesystem down
// without flushing the journal.
const (
	goingDown           = 0x8004587d
	goingDownNoLogFlush = 2
)

// shutDown shuts the filesystem mounted at dir down: every later I/O on it
// fails with EIO, and what its journal had not committed is lost.
func shutDown(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	flags := uint32(goingDownNoLogFlush)
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), goingDown, uintptr(unsafe.Pointer(&flags))); errno != 0 {
		return errno
	}
	return nil
}

// matrixOptions are the child's options: small memstores, tables and
// levels, so that a few megabytes of writes rotate logs, flush and
// compact all the time.
func matrixOptions(sync bool) *Options {
	return &Options{
		MemstoreSize:        MinMemstoreSize,
		L0CompactionTrigger: 2,
		BaseLevelSize:       2 << 20,
		LevelSizeRatio:      4,
		TargetTableSize:     512 << 10,
		NoSync:              !sync,
		Logger:              slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// matrixBatch is batch i of the matrix workload: 1 to 4 puts of keys of
// its own, with values of 256 bytes to 2 KiB, the same in child and parent.
func matrixBatch(i int) map[string][]byte {
	rng := rand.New(rand.NewPCG(uint64(i), 0x6d617478))
	puts := map[string][]byte{}
	for j := range 1 + rng.IntN(4) {
		v := make([]byte, 256+rng.IntN(1792))
		for k := range v {
			v[k] = byte('a' + (i+j+k)%26)
		}
		puts[fmt.Sprintf("b%08d.%d", i, j)] = v
	}
	return puts
}

func writeMatrixBatch(db *DB, i int, sync bool) error {
	b := db.NewBatch()
	for k, v := range matrixBatch(i) {
		b.Put([]byte(k), v)
	}
	return db.Write(b, syncIf(sync))
}

// TestFsMatrixChild is the child of TestFilesystemMatrix. In the database
// STRATA_FSM_DIR it writes batches from STRATA_FSM_START on, printing
// "ack N" for each; STRATA_FSM_MODE says what else it does:
//
//	write       write synced batches (unsynced if STRATA_FSM_UNSYNCED is
//	            set) until killed, or until a write fails: then print
//	            "fault ERROR" and exit 3
//	unsynced,   write, fill the disk (the file STRATA_FSM_FILLER), write on
//	synced      until a write fails ("fault ERROR"), free the space, write
//	            until one succeeds again ("resumed MS"), write 300 more,
//	            close ("done")
//	flush       the same, the disk filled once the memstore is nearly full
//	compaction  the same, with 4 MiB of keys of their own compacted into L1
//	            first and the disk filled but 2 MiB, then overwrites of
//	            those keys flushed into L0 tables until a compaction, which
//	            must rewrite L1, runs out of space
func TestFsMatrixChild(t *testing.T) {
	dir := os.Getenv("STRATA_FSM_DIR")
	if dir == "" {
		t.Skip("run by TestFilesystemMatrix")
	}
	mode := os.Getenv("STRATA_FSM_MODE")
	began := time.Now()
	phase := func(name string) { fmt.Printf("phase %s at %d ms\n", name, time.Since(began).Milliseconds()) }
	next, err := strconv.Atoi(os.Getenv("STRATA_FSM_START"))
	require.NoError(t, err)
	sync := mode != "unsynced" && os.Getenv("STRATA_FSM_UNSYNCED") == ""
	opts := matrixOptions(sync)
	if mode == "compaction" {
		opts.BaseLevelSize = 64 << 20 // L1 stays whole: each compaction into it rewrites all of it
	}
	db, err := Open(dir, opts)
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		os.Exit(2)
	}
	write := func() error {
		err := writeMatrixBatch(db, next, sync)
		if err == nil {
			fmt.Printf("ack %d\n", next)
			next++
		}
		return err
	}
	if mode == "write" {
		for {
			if err := write(); err != nil {
				fmt.Printf("fault %v\n", err)
				os.Exit(3)
			}
		}
	}
	for range 500 {
		if err := write(); err != nil {
			fmt.Printf("failed before the fault: %v\n", err)
			os.Exit(2)
		}
	}
	// Values for the compaction's keys, random so that compression leaves
	// L1 its 4 MiB.
	rng := rand.New(rand.NewPCG(1, 2))
	value := func() []byte {
		v := make([]byte, 1024)
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v
	}
	switch mode {
	case "flush":
		for db.Stats().MemstoreBytes < MinMemstoreSize*3/4 {
			if err := write(); err != nil {
				fmt.Printf("failed before the fault: %v\n", err)
				os.Exit(2)
			}
		}
	case "compaction":
		// Keys of its own, which the parent does not check: 4 MiB in L1.
		b := db.NewBatch()
		for k := range 4000 {
			b.Put(fmt.Appendf(nil, "c%06d", k), value())
			if b.Len() == 100 {
				if err := db.Write(b, DefaultSync); err != nil {
					fmt.Printf("failed before the fault: %v\n", err)
					os.Exit(2)
				}
				b.Reset()
			}
		}
		if err := db.Compact(); err != nil {
			fmt.Printf("failed before the fault: %v\n", err)
			os.Exit(2)
		}
	}
	filler := os.Getenv("STRATA_FSM_FILLER")
	leave := int64(0)
	if mode == "compaction" {
		leave = 2 << 20 // room for the log and flushes, not for a compaction that rewrites L1
	}
	phase("fill")
	if err := fillDisk(filler, leave); err != nil {
		fmt.Printf("fill: %v\n", err)
		os.Exit(2)
	}
	phase("filled")
	faulted, filled := false, time.Now()
	for round := 0; time.Since(filled) < time.Minute; round++ {
		err := write()
		if mode == "compaction" && err == nil {
			// Overwrites spread over the L1 keys, flushed: L0 tables that
			// overlap all of L1.
			b := db.NewBatch()
			for k := round % 40; k < 4000; k += 40 {
				b.Put(fmt.Appendf(nil, "c%06d", k), value())
			}
			if err = db.Write(b, DefaultSync); err == nil {
				err = db.Flush()
			}
			if err == nil && db.Stats().CompactionsPaused > 0 {
				fmt.Printf("fault compaction paused, writes go on\n")
				faulted = true
				break
			}
		}
		if err != nil {
			fmt.Printf("fault %v\n", err)
			faulted = true
			break
		}
	}
	if !faulted {
		fmt.Printf("nofault\n")
	}
	phase("free")
	if err := os.Remove(filler); err != nil {
		fmt.Printf("free: %v\n", err)
		os.Exit(2)
	}
	start := time.Now()
	for err := write(); err != nil; err = write() {
		if time.Since(start) > 60*time.Second {
			fmt.Printf("never resumed: %v\n", err)
			os.Exit(4)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("resumed %d\n", time.Since(start).Milliseconds())
	for range 300 {
		if err := write(); err != nil {
			fmt.Printf("failed after resuming: %v\n", err)
			os.Exit(4)
		}
	}
	if err := db.Close(); err != nil {
		fmt.Printf("close: %v\n", err)
		os.Exit(4)
	}
	fmt.Printf("done\n")
}

// fillDisk writes the file path until the filesystem is full, then cuts
// it to leave bytes free, and syncs it.
func fillDisk(path string, leave int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := bytes.Repeat([]byte{0xfe}, 1<<20)
	var size int64
	for {
		n, err := f.Write(buf)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			return err
		}
	}
	if leave > 0 {
		if err := f.Truncate(max(size-leave, 0)); err != nil {
			return err
		}
	}
	return f.Sync()
}

// matrixChild is a running child of TestFilesystemMatrix.
type matrixChild struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	acked  int // batches [start, acked) were acknowledged
	lines  []string
	stderr bytes.Buffer
	done   chan struct{}
}

func startChild(t *testing.T, dbDir, mode string, start int, env ...string) *matrixChild {
	t.Helper()
	c := &matrixChild{acked: start, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestFsMatrixChild$", "-test.count=1", "-test.timeout=10m")
	c.cmd.Env = append(append(os.Environ(), "STRATA_FSM_DIR="+dbDir, "STRATA_FSM_MODE="+mode,
		"STRATA_FSM_START="+strconv.Itoa(start)), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				i, _ := strconv.Atoi(n)
				c.acked = i + 1
			} else if !strings.HasPrefix(sc.Text(), "=== RUN") && !strings.HasPrefix(sc.Text(), "--- ") && sc.Text() != "PASS" {
				c.lines = append(c.lines, sc.Text())
			}
			c.mu.Unlock()
		}
	}()
	return c
}

// wait waits for the child to exit, killing it after timeout, and returns
// how it exited: its status, or the signal that killed it. A SIGBUS the Go
// runtime did not turn into a panic ends the process with "fatal error:
// fault" and status 2: that counts as the signal.
func (c *matrixChild) wait(timeout time.Duration) (code int, signal syscall.Signal) {
	timer := time.AfterFunc(timeout, func() { c.cmd.Process.Kill() })
	defer timer.Stop()
	<-c.done // every line read before Wait closes the pipe: the reader ends when the child does
	err := c.cmd.Wait()
	if strings.Contains(c.stderr.String(), "[signal SIGBUS") {
		return -1, syscall.SIGBUS
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, ws.Signal()
		}
		return exit.ExitCode(), 0
	}
	return 0, 0
}

func (c *matrixChild) said(prefix string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

func (c *matrixChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	stderr := c.stderr.String()
	if len(stderr) > 4000 {
		stderr = "..." + stderr[len(stderr)-4000:]
	}
	return fmt.Sprintf("stdout: %q\nstderr: %s", c.lines, stderr)
}

// checkMatrixDB verifies the database in dir, opens it, and checks that
// batches [0, acked) are all there.
func checkMatrixDB(t *testing.T, dir string, acked int) {
	t.Helper()
	report, err := Verify(dir, nil, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage, "Verify agrees with Open: no damage")
	db, err := Open(dir, &Options{Logger: quietLogger})
	require.NoError(t, err, "Open")
	defer db.Close()
	for i := range acked {
		for k, v := range matrixBatch(i) {
			got, err := db.Get([]byte(k))
			require.NoError(t, err, "batch %d, acknowledged, key %s", i, k)
			require.Equal(t, v, got, "batch %d, key %s", i, k)
		}
	}
}

// fillCell runs a disk-full fault in mode, and returns its outcome.
func fillCell(t *testing.T, m *mountedFS, mode string) string {
	dbDir := filepath.Join(m.dir, "db")
	c := startChild(t, dbDir, mode, 0, "STRATA_FSM_FILLER="+filepath.Join(m.dir, "filler"))
	code, sig := c.wait(5 * time.Minute)
	if sig != 0 {
		t.Errorf("the child was killed by %v:\n%s", sig, c.output())
		return fmt.Sprintf("killed by %v", sig)
	}
	if code != 0 {
		t.Errorf("the child exited %d:\n%s", code, c.output())
		return fmt.Sprintf("exit %d", code)
	}
	t.Logf("the child said: %q", c.lines)
	fault, faulted := c.said("fault ")
	resumed, _ := c.said("resumed ")
	checkMatrixDB(t, dbDir, c.acked)
	if !faulted {
		t.Errorf("the disk was full, and for a minute no write failed and no compaction paused:\n%s", c.output())
		return fmt.Sprintf("no fault within a minute; %d acked, all there", c.acked)
	}
	if strings.Contains(fault, "compaction paused") {
		return fmt.Sprintf("compaction paused (ENOSPC), writes went on; %d acked, all there", c.acked)
	}
	return fmt.Sprintf("%s; resumed %s ms after space was freed; %d acked, all there", faultSummary(fault), resumed, c.acked)
}

// faultSummary shortens a fault's error to what the table shows.
func faultSummary(fault string) string {
	if strings.Contains(fault, "background error: compaction:") && strings.Contains(fault, "no space left on device") {
		return "compactions paused (ENOSPC), then L0 full: writes refused"
	}
	for _, e := range []struct{ text, short string }{
		{"no space left on device", "ENOSPC"},
		{"disk quota exceeded", "EDQUOT"},
		{"input/output error", "EIO"},
	} {
		if strings.Contains(fault, e.text) {
			return e.short
		}
	}
	return fault
}

// shutdownCell shuts the filesystem down at random moments of synced
// writes, five times, remounting it each time.
func shutdownCell(t *testing.T, m *mountedFS, rng *rand.Rand) string {
	if !m.shutdown {
		return "n/a (no shutdown ioctl)"
	}
	dbDir := filepath.Join(m.dir, "db")
	acked, faults := 0, map[string]int{}
	for round := range 5 {
		c := startChild(t, dbDir, "write", acked)
		time.Sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		require.NoError(t, shutDown(m.dir))
		code, sig := c.wait(30 * time.Second)
		if sig != 0 && sig != syscall.SIGKILL {
			t.Errorf("round %d: the child was killed by %v:\n%s", round, sig, c.output())
			return fmt.Sprintf("killed by %v", sig)
		}
		fault, _ := c.said("fault ")
		if code != 3 {
			t.Errorf("round %d: the child exited %d, %v, without reporting the fault:\n%s", round, code, sig, c.output())
		}
		faults[faultSummary(fault)]++
		acked = c.acked
		m.unmount(t)
		m.mount(t)
		checkMatrixDB(t, dbDir, acked)
	}
	return fmt.Sprintf("%s; remounted, %d synced acked, all there", summarize(faults), acked)
}

// killCell kills the child with SIGKILL at random moments of unsynced
// writes, five times.
func killCell(t *testing.T, m *mountedFS, rng *rand.Rand) string {
	dbDir := filepath.Join(m.dir, "db")
	acked := 0
	for range 5 {
		c := startChild(t, dbDir, "write", acked, "STRATA_FSM_UNSYNCED=1")
		time.Sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		require.NoError(t, c.cmd.Process.Kill())
		_, sig := c.wait(30 * time.Second)
		require.Equal(t, syscall.SIGKILL, sig, "the child died of the kill, and nothing before:\n%s", c.output())
		acked = c.acked
		checkMatrixDB(t, dbDir, acked)
	}
	return fmt.Sprintf("%d unsynced acked, all there", acked)
}

// summarize prints a count of each fault seen.
func summarize(faults map[string]int) string {
	var parts []string
	for f, n := range faults {
		parts = append(parts, fmt.Sprintf("%d× %s", n, f))
	}
	return strings.Join(parts, ", ")
}
