package lake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// RowGroupRows bounds a row group: engines read a file by row groups, and a
// bound keeps a reader's memory small whatever the file's size.
const RowGroupRows = 64 << 10

// Encode is the Parquet file of recs, in the order given. The same records
// encode to the same bytes (decision 0130): the writer's options are fixed
// here, it stamps no time or host into the file, and map entries are
// written in key order.
func Encode(recs []Record) ([]byte, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[Record](&buf,
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.CreatedBy("garm ledger export", "1", ""),
		parquet.PageBufferSize(1<<20),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
	)
	for len(recs) > 0 {
		n, err := w.Write(recs[:min(len(recs), RowGroupRows)])
		if err != nil {
			return nil, fmt.Errorf("encoding a lake file: %w", err)
		}
		recs = recs[n:]
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encoding a lake file: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads every record of a lake file.
func Decode(data []byte) ([]Record, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	r := parquet.NewGenericReader[Record](f)
	defer r.Close()
	out := make([]Record, 0, f.NumRows())
	buf := make([]Record, 1024)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		clear(buf)
	}
}

// seqDigits pads sequences in object names so that names sort as numbers.
const seqDigits = 20

// ObjectKey is the name, under a lake's prefix, of the object holding the
// rows of partition (Record.Partition) that stream messages first to last
// hold.
func ObjectKey(partition string, first, last uint64) string {
	return fmt.Sprintf("%s%0*d-%0*d.parquet", partition, seqDigits, first, seqDigits, last)
}

var objectKeyPattern = regexp.MustCompile(`^(date=\d{4}-\d{2}-\d{2}/app=[^/]+/)(\d{20})-(\d{20})\.parquet$`)

// ParseObjectKey is ObjectKey's inverse; ok is false for a name that is
// not a lake file's.
func ParseObjectKey(key string) (partition string, first, last uint64, ok bool) {
	m := objectKeyPattern.FindStringSubmatch(key)
	if m == nil {
		return "", 0, 0, false
	}
	first, err1 := strconv.ParseUint(m[2], 10, 64)
	last, err2 := strconv.ParseUint(m[3], 10, 64)
	if err1 != nil || err2 != nil || first > last {
		return "", 0, 0, false
	}
	return m[1], first, last, true
}
