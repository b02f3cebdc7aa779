package simpledb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// The bank across crashes: a child process transfers money between
// accounts in transactions until it is killed; the parent checks the total
// with a follower's View while the child runs, and after each SIGKILL
// reopens the database and checks it again. No transfer is ever half
// there.
const bankAccounts, bankInitial = 10, 1000

func bankAccount(i int) []byte { return fmt.Appendf(nil, "account-%02d", i) }

// bankTotal sums the accounts as tx sees them.
func bankTotal(tx *Txn) (int64, error) {
	it, err := tx.NewPrefixIterator([]byte("account-"))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var sum int64
	n := 0
	for _, v := range it.All() {
		sum += int64(binary.BigEndian.Uint64(v))
		n++
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	if n != bankAccounts {
		return 0, fmt.Errorf("%d accounts", n)
	}
	return sum, nil
}

// TestBankChild is the child of TestBankKill: it creates the accounts if
// they are missing, then transfers between them from 4 goroutines until it
// is killed.
func TestBankChild(t *testing.T) {
	dir := os.Getenv("STRATA_BANK_DIR")
	if dir == "" {
		t.Skip("run by TestBankKill")
	}
	db, err := Open(dir, killOptions())
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		os.Exit(2)
	}
	if ok, _ := db.Has(bankAccount(0)); !ok {
		b := db.NewBatch()
		for i := range bankAccounts {
			b.Put(bankAccount(i), binary.BigEndian.AppendUint64(nil, bankInitial))
		}
		if err := db.Write(b, Sync); err != nil {
			fmt.Printf("create failed: %v\n", err)
			os.Exit(2)
		}
	}
	fmt.Println("ready")
	for w := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(os.Getpid())))
			for {
				from, to := rng.IntN(bankAccounts), rng.IntN(bankAccounts)
				err := db.Update(1000, func(tx *Txn) error {
					a, err := tx.Get(bankAccount(from))
					if err != nil {
						return err
					}
					b, err := tx.Get(bankAccount(to))
					if err != nil {
						return err
					}
					x, y, n := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b), uint64(rng.IntN(50))
					if from == to || x < n {
						return nil
					}
					tx.Put(bankAccount(from), binary.BigEndian.AppendUint64(nil, x-n))
					return tx.Put(bankAccount(to), binary.BigEndian.AppendUint64(nil, y+n))
				})
				if err != nil {
					fmt.Printf("transfer failed: %v\n", err)
					os.Exit(2)
				}
			}
		}()
	}
	select {}
}

func TestBankKill(t *testing.T) {
	t.Parallel()
	if os.Getenv("STRATA_BANK_DIR") != "" {
		t.Skip("in the child")
	}
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	var views atomic.Int64
	moved := false // some transfer landed
	for cycle := range max(*killCycles/2, 2) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBankChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STRATA_BANK_DIR="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 64)
		n, _ := out.Read(buf) // "ready": the accounts exist
		require.Contains(t, string(buf[:n]), "ready", "cycle %d: the child said %q", cycle, buf[:n])

		// A follower checks the total while the child transfers.
		o := killOptions()
		o.Follow = true
		f, err := Open(dir, o)
		require.NoError(t, err)
		deadline := time.Now().Add(time.Duration(50+rng.IntN(300)) * time.Millisecond)
		for time.Now().Before(deadline) {
			if err := f.CatchUp(); errors.Is(err, ErrOutpaced) {
				continue
			} else {
				require.NoError(t, err, "cycle %d", cycle)
			}
			require.NoError(t, f.View(func(tx *Txn) error {
				sum, err := bankTotal(tx)
				require.NoError(t, err)
				require.Equal(t, int64(bankAccounts*bankInitial), sum, "cycle %d: a follower's view", cycle)
				return nil
			}))
			views.Add(1)
		}
		require.NoError(t, f.Close())
		require.NoError(t, cmd.Process.Kill())
		cmd.Wait()

		db, err := Open(dir, killOptions())
		require.NoError(t, err, "cycle %d: reopen after SIGKILL", cycle)
		require.NoError(t, db.View(func(tx *Txn) error {
			sum, err := bankTotal(tx)
			require.NoError(t, err)
			require.Equal(t, int64(bankAccounts*bankInitial), sum, "cycle %d: after SIGKILL", cycle)
			v, err := tx.Get(bankAccount(0))
			moved = moved || err == nil && binary.BigEndian.Uint64(v) != bankInitial
			return err
		}))
		require.NoError(t, db.Close())
	}
	require.True(t, moved, "no transfer landed")
	t.Logf("%d kill cycles, %d follower views, the total always %d", max(*killCycles/2, 2), views.Load(), bankAccounts*bankInitial)
}
