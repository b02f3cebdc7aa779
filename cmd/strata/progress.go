package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a progress bar on standard error, shown only when standard
// error is a terminal: a script that reads the output, or a log, gets
// none. A nil *progress does nothing.
type progress struct{ bar *progressbar.ProgressBar }

// newProgress starts a bar for total bytes (-1: unknown, a spinner
// counting items), or returns nil when w is not a terminal.
func newProgress(w io.Writer, total int64, description string, bytes bool) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	}
	return &progress{bar: progressbar.NewOptions64(total, opts...)}
}

func (p *progress) add(n int64) {
	if p != nil {
		p.bar.Add64(n)
	}
}

func (p *progress) finish() {
	if p != nil {
		p.bar.Finish()
	}
}
