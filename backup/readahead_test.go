package backup

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestReadAhead(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	// Every byte comes through, in order, whatever the read sizes.
	ra := newReadAhead(iotest.HalfReader(bytes.NewReader(data)), 1000, 3)
	got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(ra, 50)))
	require.NoError(t, err)
	rest, err := io.ReadAll(ra)
	require.NoError(t, err)
	require.Equal(t, data, append(got, rest...))
	ra.stop()

	// The source's error comes after the bytes read before it.
	boom := errors.New("boom")
	ra = newReadAhead(io.MultiReader(bytes.NewReader(data[:2500]), iotest.ErrReader(boom)), 1000, 2)
	got, err = io.ReadAll(ra)
	require.ErrorIs(t, err, boom)
	require.Equal(t, data[:2500], got)
	ra.stop()

	// Stopping early ends the goroutine.
	ra = newReadAhead(bytes.NewReader(data), 100, 2)
	_, err = ra.Read(make([]byte, 10))
	require.NoError(t, err)
	ra.stop()
}
