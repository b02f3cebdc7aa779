package benchmark

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// deviceWritten returns a function that reads how many bytes the block
// device holding path has written since boot (its sectors written, from
// /sys/dev/block), or nil where that is not known.
func deviceWritten(path string) func() int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return nil
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	stat := fmt.Sprintf("/sys/dev/block/%d:%d/stat", major, minor)
	read := func() int64 {
		data, err := os.ReadFile(stat)
		if err != nil {
			return -1
		}
		fields := strings.Fields(string(data))
		if len(fields) < 7 {
			return -1
		}
		sectors, err := strconv.ParseInt(fields[6], 10, 64)
		if err != nil {
			return -1
		}
		return sectors * 512
	}
	if read() < 0 {
		return nil
	}
	return read
}
