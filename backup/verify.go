package backup

import (
	"context"
	"errors"
	"fmt"
	"io"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// VerifyOptions tunes Verify.
type VerifyOptions struct {
	// Progress, when set, is called as the archive is read with the
	// compressed bytes read so far and the archive's size.
	Progress func(done, total int64)
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	// Backup is the backup's name.
	Backup string
	// Phase is the phase in velero-backup.json.
	Phase string
	// FormatVersion is the content of metadata/version in the archive.
	FormatVersion string
	// Files are the objects in the backup's folder.
	Files []Object
	// Items is the number of items in the archive (each item once, not
	// counting its preferred-version copy).
	Items int
	// ListedItems is the number of items in the resource list.
	ListedItems int
	// ArchiveBytes and ContentBytes are the archive's compressed and
	// uncompressed sizes.
	ArchiveBytes, ContentBytes int64
	// Problems make the backup unusable or untrustworthy.
	Problems []Problem
	// Notes are observations that do not fail verification (a
	// PartiallyFailed phase, a missing log).
	Notes []string
}

// OK reports whether verification found no problem.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Problem is one thing wrong with a backup.
type Problem struct {
	// File is the file at fault ("" for the backup as a whole).
	File string
	// Message says what is wrong.
	Message string
}

// String returns "file: message".
func (p Problem) String() string {
	if p.File == "" {
		return p.Message
	}
	return p.File + ": " + p.Message
}

func (r *VerifyReport) problem(file, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{File: file, Message: fmt.Sprintf(format, args...)})
}

// Verify checks backup name in the bucket without a Velero server:
// the required files are present, velero-backup.json decodes and is final,
// every gzip stream is intact (CRC and length), the tarball is readable
// with a metadata/version file, and the items in it match the resource
// list, per API group and namespace. It streams every file, so memory use
// does not grow with the backup's size, and resumes interrupted downloads.
//
// Verify returns the report and, when it lists problems, a *VerifyError
// (ErrCorrupt). Errors reaching the bucket are returned as they are.
func (s *Store) Verify(ctx context.Context, name string, opts VerifyOptions) (*VerifyReport, error) {
	rep := &VerifyReport{Backup: name}
	files, err := s.Files(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", name, err)
	}
	rep.Files = files
	present := map[string]Object{}
	for _, f := range files {
		present[f.Name] = f
	}
	for _, f := range []string{metadataFile, archiveFile(name), resourceListFile(name)} {
		if _, ok := present[f]; !ok {
			rep.problem(f, "missing")
		}
	}
	for _, f := range []string{logsFile(name), resultsFile(name)} {
		if _, ok := present[f]; !ok {
			rep.Notes = append(rep.Notes, f+" is missing")
		}
	}
	if _, ok := present[metadataFile]; ok {
		if err := s.verifyMetadata(ctx, name, rep); err != nil {
			return nil, err
		}
	}
	listed := counts{}
	if _, ok := present[resourceListFile(name)]; ok {
		if err := s.verifyResourceList(ctx, name, rep, listed); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{logsFile(name), resultsFile(name)} {
		if _, ok := present[f]; ok {
			if err := s.verifyGzip(ctx, name, f, rep); err != nil {
				return nil, err
			}
		}
	}
	if obj, ok := present[archiveFile(name)]; ok {
		rep.ArchiveBytes = obj.Size
		archived, err := s.verifyArchive(ctx, name, obj.Size, rep, opts)
		if err != nil {
			return nil, err
		}
		if _, ok := present[resourceListFile(name)]; ok && rep.OK() {
			compareCounts(rep, listed, archived)
		}
	}
	if !rep.OK() {
		return rep, &VerifyError{Report: rep}
	}
	return rep, nil
}

// transient reports whether err is about reaching the bucket (to be
// returned) rather than about the backup's bytes (a problem to report).
func transient(ctx context.Context, err error) bool {
	var fe *fetchError
	return ctx.Err() != nil || errors.As(err, &fe)
}

func (s *Store) verifyMetadata(ctx context.Context, name string, rep *VerifyReport) error {
	b, err := s.Backup(ctx, name)
	if err != nil {
		if transient(ctx, err) {
			return fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(metadataFile, "%v", unwrapDecode(err))
		return nil
	}
	rep.Phase = string(b.Status.Phase)
	if b.Name != name {
		rep.problem(metadataFile, "names backup %q, not %q", b.Name, name)
	}
	switch b.Status.Phase {
	case velerov1.BackupPhaseCompleted:
	case velerov1.BackupPhasePartiallyFailed:
		rep.Notes = append(rep.Notes, fmt.Sprintf("phase PartiallyFailed (%d errors, %d warnings)", b.Status.Errors, b.Status.Warnings))
	case velerov1.BackupPhaseFailed:
		rep.problem(metadataFile, "backup failed: %s", b.Status.FailureReason)
	default:
		rep.problem(metadataFile, "phase %q is not final (Velero has not finished this backup)", b.Status.Phase)
	}
	return nil
}

func unwrapDecode(err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Err
	}
	return err
}

func (s *Store) verifyResourceList(ctx context.Context, name string, rep *VerifyReport, listed counts) error {
	file := resourceListFile(name)
	rc, err := s.openGzip(ctx, s.backupKey(name, file))
	if err != nil {
		if transient(ctx, err) {
			return fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", unwrapDecode(err))
		return nil
	}
	defer rc.Close()
	err = scanResourceList(rc, func(gvk, item string) {
		listed.add(groupOf(gvk), namespaceOf(item))
		rep.ListedItems++
	})
	if err == nil {
		_, err = io.Copy(io.Discard, rc) // reach the gzip trailer: CRC and size
	}
	if err != nil {
		if transient(ctx, err) {
			return fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", unwrapDecode(err))
	}
	return nil
}

func (s *Store) verifyGzip(ctx context.Context, name, file string, rep *VerifyReport) error {
	rc, err := s.openGzip(ctx, s.backupKey(name, file))
	if err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
	}
	if err != nil {
		if transient(ctx, err) {
			return fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", unwrapDecode(err))
	}
	return nil
}
