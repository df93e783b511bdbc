package backup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// objectReader streams one object. When the body breaks off (a reset or a
// truncated response), it asks for the rest with a Range request pinned to
// the same ETag, so a long download survives a flaky connection and never
// mixes two versions of an object.
type objectReader struct {
	ctx     context.Context
	o       *S3Objects
	key     string
	body    io.ReadCloser
	etag    string
	size    int64 // -1 until known
	off     int64
	resumes int
}

func (r *objectReader) get() error {
	in := &s3.GetObjectInput{Bucket: aws.String(r.o.bucket), Key: aws.String(r.key)}
	if r.off > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", r.off))
		in.IfMatch = aws.String(r.etag)
	}
	out, err := r.o.s3.GetObject(r.ctx, in)
	if err != nil {
		err = r.o.wrap(err, r.key)
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return &fetchError{fmt.Errorf("get %s: %w", r.key, err)}
	}
	r.body = out.Body
	if r.off == 0 {
		r.etag = aws.ToString(out.ETag)
		if out.ContentLength != nil {
			r.size = *out.ContentLength
		}
	}
	return nil
}

// Read reads from the body and resumes after a broken connection.
func (r *objectReader) Read(p []byte) (int, error) {
	for {
		n, err := r.body.Read(p)
		r.off += int64(n)
		switch {
		case err == nil:
			return n, nil
		case err == io.EOF && (r.size < 0 || r.off == r.size):
			return n, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if rerr := r.resume(err); rerr != nil {
			return n, rerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (r *objectReader) resume(cause error) error {
	if r.ctx.Err() != nil {
		return &fetchError{fmt.Errorf("read %s: %w", r.key, r.ctx.Err())}
	}
	if r.resumes+1 >= r.o.cfg.MaxAttempts || r.etag == "" {
		return &fetchError{fmt.Errorf("read %s at byte %d (after %d resumes): %w", r.key, r.off, r.resumes, cause)}
	}
	r.resumes++
	r.o.log.Debug("resuming download", "key", r.key, "offset", r.off, "cause", cause)
	r.body.Close()
	if err := r.get(); err != nil {
		return &fetchError{fmt.Errorf("resume %s at byte %d: %w (after %v)", r.key, r.off, err, cause)}
	}
	return nil
}

// Close closes the current body.
func (r *objectReader) Close() error {
	if r.body == nil {
		return nil
	}
	return r.body.Close()
}

// fetchError marks a failure to fetch bytes from the bucket (as opposed to
// bytes that arrived and are bad).
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }
