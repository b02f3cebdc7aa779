package simpledb

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// eventPairs is a listener that checks the pairing of events: every End
// follows its Begin (by JobID, for flushes and compactions, which may
// overlap), stalls alternate, and by Close nothing is left begun. It also
// keeps the events in order, as names, for the scripted test.
type eventPairs struct {
	mu      sync.Mutex
	begun   map[string]bool // "flush 3", "compaction 4"
	stalled bool
	names   []string
	counts  map[string]int
	errs    []string
}

func newEventPairs() *eventPairs {
	return &eventPairs{begun: map[string]bool{}, counts: map[string]int{}}
}

func (p *eventPairs) note(name string, check func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names = append(p.names, name)
	p.counts[name]++
	if msg := check(); msg != "" {
		p.errs = append(p.errs, msg)
	}
}

func (p *eventPairs) begin(job string) string {
	if p.begun[job] {
		return job + " began twice"
	}
	p.begun[job] = true
	return ""
}

func (p *eventPairs) end(job string) string {
	if !p.begun[job] {
		return job + " ended, not begun"
	}
	delete(p.begun, job)
	return ""
}

func (p *eventPairs) listener() *EventListener {
	return &EventListener{
		FlushBegin: func(i FlushInfo) {
			p.note("flush begin", func() string { return p.begin(fmt.Sprint("flush ", i.JobID)) })
		},
		FlushEnd: func(i FlushInfo) {
			p.note("flush end", func() string {
				if i.Err == nil && (i.Table == 0) != (i.TableBytes == 0) {
					return fmt.Sprintf("flush %d: table %d of %d bytes", i.JobID, i.Table, i.TableBytes)
				}
				return p.end(fmt.Sprint("flush ", i.JobID))
			})
		},
		CompactionBegin: func(i CompactionInfo) {
			p.note("compaction begin", func() string {
				if len(i.Inputs[0]) == 0 {
					return fmt.Sprintf("compaction %d of L%d: no inputs", i.JobID, i.Level)
				}
				return p.begin(fmt.Sprint("compaction ", i.JobID))
			})
		},
		CompactionEnd: func(i CompactionInfo) {
			p.note("compaction end", func() string {
				if i.Err == nil && i.Move && !slices.Equal(i.Outputs, i.Inputs[0]) {
					return fmt.Sprintf("move %d: outputs %v, inputs %v", i.JobID, i.Outputs, i.Inputs)
				}
				return p.end(fmt.Sprint("compaction ", i.JobID))
			})
		},
		WriteStallBegin: func(i WriteStallInfo) {
			p.note("stall begin", func() string {
				if p.stalled {
					return "a stall began during one"
				}
				p.stalled = true
				return ""
			})
		},
		WriteStallEnd: func(i WriteStallInfo) {
			p.note("stall end", func() string {
				if !p.stalled {
					return "a stall ended, not begun"
				}
				p.stalled = false
				return ""
			})
		},
		BackgroundError: func(i BackgroundErrorInfo) {
			p.note("background error", func() string {
				if i.Err == nil {
					return "a background error without an error"
				}
				return ""
			})
		},
		Resumed: func(i ResumeInfo) { p.note("resumed", func() string { return "" }) },
		TableCreated: func(i TableInfo) {
			p.note("table created", func() string {
				if i.Num == 0 || i.Bytes <= 0 || i.JobID == 0 {
					return fmt.Sprintf("table created: %+v", i)
				}
				return ""
			})
		},
		TableDeleted: func(i FileInfo) { p.note("table deleted", func() string { return "" }) },
		BlobFileCreated: func(i BlobFileInfo) {
			p.note("blob file created", func() string {
				if i.Num == 0 || i.Bytes <= 0 || i.Values == 0 || i.JobID == 0 {
					return fmt.Sprintf("blob file created: %+v", i)
				}
				return ""
			})
		},
		BlobFileDeleted: func(i FileInfo) { p.note("blob file deleted", func() string { return "" }) },
		LogCreated: func(i LogInfo) {
			name := "log created"
			if i.Recycled != 0 {
				name = "log recycled"
			}
			p.note(name, func() string { return "" })
		},
		LogDeleted:      func(i FileInfo) { p.note("log deleted", func() string { return "" }) },
		ManifestCreated: func(i FileInfo) { p.note("manifest created", func() string { return "" }) },
		DiskSlow: func(i DiskSlowInfo) {
			p.note("disk slow", func() string {
				if i.Duration <= 0 || i.Path == "" {
					return fmt.Sprintf("disk slow: %+v", i)
				}
				return ""
			})
		},
		CaughtUp: func(i CatchUpInfo) {
			p.note("caught up", func() string {
				if i.ToSeq < i.FromSeq {
					return fmt.Sprintf("caught up backwards: %+v", i)
				}
				return ""
			})
		},
	}
}

// count returns how many events of that name arrived.
func (p *eventPairs) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[name]
}

// closed checks, once the database is closed, that every event paired,
// and starts over for the next Open: job IDs are a database's.
func (p *eventPairs) closed(t *testing.T, msg string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	require.Empty(t, p.errs, msg)
	require.Empty(t, p.begun, "%s: begun and not ended", msg)
	require.False(t, p.stalled, "%s: a stall not ended", msg)
	p.names = nil
}

// blockTables blocks the creation of tables while it is set, so that a
// flush waits and writes stall behind it.
type blockTables struct {
	mu      sync.Mutex
	blocked chan struct{} // nil: not blocking
}

func (b *blockTables) MaybeError(op errorfs.Op, path string) error {
	b.mu.Lock()
	ch := b.blocked
	b.mu.Unlock()
	if ch != nil && op == errorfs.OpCreate && errorfs.Suffix(".sst.tmp")(path) {
		<-ch
	}
	return nil
}

func (b *blockTables) block() {
	b.mu.Lock()
	b.blocked = make(chan struct{})
	b.mu.Unlock()
}

func (b *blockTables) release() {
	b.mu.Lock()
	close(b.blocked)
	b.blocked = nil
	b.mu.Unlock()
}

// keepInto returns a listener function that calls f and keeps its event
// in *kept, under mu.
func keepInto[T any](mu *sync.Mutex, kept *[]T, f func(T)) func(T) {
	return func(info T) {
		f(info)
		mu.Lock()
		*kept = append(*kept, info)
		mu.Unlock()
	}
}

// A scripted run fires every event, in order, with what it describes, and
// Close delivers them all.
func TestEvents(t *testing.T) {
	pairs := newEventPairs()
	var mu sync.Mutex
	var flushes []FlushInfo
	var compactions []CompactionInfo
	var stalls []WriteStallInfo
	var failures []BackgroundErrorInfo
	var resumes []ResumeInfo
	listener := pairs.listener()
	listener.FlushEnd = keepInto(&mu, &flushes, listener.FlushEnd)
	listener.CompactionEnd = keepInto(&mu, &compactions, listener.CompactionEnd)
	listener.WriteStallEnd = keepInto(&mu, &stalls, listener.WriteStallEnd)
	listener.BackgroundError = keepInto(&mu, &failures, listener.BackgroundError)
	listener.Resumed = keepInto(&mu, &resumes, listener.Resumed)
	blocker := &blockTables{}
	logSync := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO}
	opts := testOptions(errorfs.Wrap(vfs.NewMem(), injectors{blocker, logSync}))
	opts.MaxImmutableMemstores, opts.DisableAutoCompaction, opts.EventListener = 1, true, listener
	opts.DiskSlowThreshold = time.Nanosecond // every fsync of the log is slow
	db, err := Open("/db", opts)
	require.NoError(t, err)

	// A flush and a compaction.
	value := make([]byte, 1000)
	for i := range 100 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), value, NoSync))
	}
	require.NoError(t, db.Compact())
	// The values' blob file goes once a compaction drops the last
	// reference to it.
	require.NoError(t, db.DeleteRange([]byte("key"), []byte("key9"), NoSync))
	require.NoError(t, db.Compact())

	// A stall: the flush of a full memstore waits, and so does the write
	// that fills the next.
	blocker.block()
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil && i < 2*MinMemstoreSize/1000; i++ {
			err = db.Put(fmt.Appendf(nil, "stall%04d", i), value, NoSync)
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return db.Stats().Stalls > 0 }, 10*time.Second, time.Millisecond)
	blocker.release()
	require.NoError(t, <-done)

	// A failure, and Resume.
	logSync.Enable()
	require.ErrorIs(t, db.Put([]byte("k"), []byte("v"), Sync), ErrWriteOutcomeUnknown)
	logSync.Disable()
	require.NoError(t, db.Resume())
	require.NoError(t, db.Put([]byte("k"), []byte("v"), Sync))
	require.NoError(t, db.Close())
	counts := maps.Clone(pairs.counts)
	pairs.closed(t, "scripted")
	for _, event := range []string{"table created", "table deleted", "blob file created", "blob file deleted", "log created", "log recycled", "log deleted", "manifest created", "disk slow"} {
		require.Positive(t, counts[event], "%s events in %v", event, counts)
	}

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, flushes)
	require.Positive(t, flushes[0].Table)
	require.Positive(t, flushes[0].TableBytes)
	require.Positive(t, flushes[0].Entries)
	require.NotEmpty(t, compactions)
	require.Equal(t, 0, compactions[0].Level)
	require.NotEmpty(t, compactions[0].Outputs)
	require.Positive(t, compactions[0].BytesRead)
	require.Len(t, stalls, 1)
	require.Equal(t, StallMemstores, stalls[0].Cause)
	require.Positive(t, stalls[0].Duration)
	require.Len(t, failures, 1)
	require.ErrorIs(t, failures[0].Err, syscall.EIO)
	require.True(t, failures[0].Resumable)
	require.Len(t, resumes, 1)
	require.ErrorIs(t, resumes[0].Err, syscall.EIO)
}

// A follower reports its catch-ups.
func TestEventsOfAFollower(t *testing.T) {
	mem := vfs.NewMem()
	db, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer db.Close()
	var mu sync.Mutex
	var caught []CatchUpInfo
	fo := testOptions(mem)
	fo.Follow = true
	fo.EventListener = &EventListener{CaughtUp: func(i CatchUpInfo) {
		mu.Lock()
		caught = append(caught, i)
		mu.Unlock()
	}}
	follower, err := Open("/db", fo)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%d", i), []byte("v"), Sync))
	}
	require.NoError(t, follower.CatchUp())
	require.NoError(t, follower.Close())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, caught, 1)
	require.Equal(t, uint64(3), caught[0].ToSeq-caught[0].FromSeq)
}

// A listener that panics loses its event, and nothing else: the database
// goes on, and later events arrive.
func TestEventListenerPanics(t *testing.T) {
	var mu sync.Mutex
	var ends []int
	opts := testOptions(vfs.NewMem())
	opts.EventListener = &EventListener{
		FlushBegin: func(FlushInfo) { panic("a listener's bug") },
		FlushEnd: func(i FlushInfo) {
			mu.Lock()
			ends = append(ends, i.JobID)
			mu.Unlock()
		},
	}
	db, err := Open("/db", opts)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, db.Put([]byte("k"), fmt.Appendf(nil, "v%d", i), NoSync))
		require.NoError(t, db.Flush())
	}
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v2", string(v))
	require.NoError(t, db.Close())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ends, 3)
}
