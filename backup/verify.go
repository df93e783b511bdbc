package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// Problems make the backup unusable or untrustworthy. At most 100
	// are listed; ProblemsLeftOut counts the rest.
	Problems []Problem
	// ProblemsLeftOut is the number of problems found beyond those listed.
	ProblemsLeftOut int
	// Notes are observations that do not fail verification (a
	// PartiallyFailed phase, a missing log).
	Notes []string
}

// OK reports whether verification found no problem.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// ProblemKind classifies a Problem.
type ProblemKind string

// The kinds of problem Verify reports.
const (
	// ProblemFile: a required file is missing or does not decode
	// (velero-backup.json, the resource list, metadata/version).
	ProblemFile ProblemKind = "file"
	// ProblemPhase: velero-backup.json names another backup, or its phase
	// is not final, or Failed.
	ProblemPhase ProblemKind = "phase"
	// ProblemStream: a gzip stream or the tarball is damaged (not gzip,
	// CRC or length mismatch, corrupt deflate data, bad tar header).
	ProblemStream ProblemKind = "stream"
	// ProblemTruncated: the data ends early: inside a gzip stream, inside a
	// tar entry, or before the tarball's end-of-archive blocks.
	ProblemTruncated ProblemKind = "truncated"
	// ProblemTrailingData: data after the end: a second gzip member, or
	// non-zero bytes after the tarball's end.
	ProblemTrailingData ProblemKind = "trailing-data"
	// ProblemUnsafeEntry: an archive entry that is not a regular file
	// (symlink, hard link, device, directory) or whose path is not local
	// (absolute, "..", "." or empty elements).
	ProblemUnsafeEntry ProblemKind = "unsafe-entry"
	// ProblemItem: an item whose body is not one JSON object, or whose
	// apiVersion, kind, metadata.name or metadata.namespace do not match
	// its path.
	ProblemItem ProblemKind = "item"
	// ProblemDuplicate: an item twice in the archive, or twice in the
	// resource list.
	ProblemDuplicate ProblemKind = "duplicate"
	// ProblemMissing: an item in the resource list but not in the archive.
	ProblemMissing ProblemKind = "missing"
	// ProblemUnlisted: an item in the archive but not in the resource list.
	ProblemUnlisted ProblemKind = "unlisted"
	// ProblemPreferredCopy: an item without its <version>-preferredversion
	// copy, or a copy without its item.
	ProblemPreferredCopy ProblemKind = "preferred-copy"
	// ProblemProgress: velero-backup.json's status.progress disagrees with
	// the archive or the resource list.
	ProblemProgress ProblemKind = "progress"
)

// maxProblems bounds the problems a report lists.
const maxProblems = 100

// Problem is one thing wrong with a backup. It is an error: errors.Is
// matches ErrCorrupt.
type Problem struct {
	// Kind says what is wrong, to branch on.
	Kind ProblemKind
	// File is the file at fault ("" for the backup as a whole).
	File string
	// Item names the item at fault, "" when the problem is not about one
	// item: "<group>/<version>/<Kind> <namespace>/<name>" as in the
	// resource list ("v1/ConfigMap demo/settings"), or the archive path
	// for an entry that cannot be identified.
	Item string
	// Message says what is wrong.
	Message string
}

// String returns "file: item: message", leaving out what is empty.
func (p Problem) String() string {
	out := p.Message
	if p.Item != "" {
		out = p.Item + ": " + out
	}
	if p.File != "" {
		out = p.File + ": " + out
	}
	return out
}

// Error returns "backup: <kind>: " and String.
func (p Problem) Error() string { return "backup: " + string(p.Kind) + ": " + p.String() }

// Unwrap returns ErrCorrupt.
func (p Problem) Unwrap() error { return ErrCorrupt }

func (r *VerifyReport) add(p Problem) {
	if len(r.Problems) >= maxProblems {
		r.ProblemsLeftOut++
		return
	}
	r.Problems = append(r.Problems, p)
}

func (r *VerifyReport) problem(kind ProblemKind, file, format string, args ...any) {
	r.add(Problem{Kind: kind, File: file, Message: fmt.Sprintf(format, args...)})
}

func (r *VerifyReport) itemProblem(kind ProblemKind, file, item, format string, args ...any) {
	r.add(Problem{Kind: kind, File: file, Item: item, Message: fmt.Sprintf(format, args...)})
}

// Verify proves backup name in the bucket complete and consistent,
// without a Velero server; backup/doc.go lists what it checks. It streams
// every file, resumes interrupted downloads, and keeps memory flat: 8 bytes
// and a few bits per item besides fixed buffers.
//
// Verify returns the report and, when it lists problems, a *VerifyError
// (ErrCorrupt). Errors reaching the bucket are returned as they are.
func (s *Store) Verify(ctx context.Context, name string, opts VerifyOptions) (*VerifyReport, error) {
	files, err := s.files(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", name, err)
	}
	v := &verification{name: name, rep: &VerifyReport{Backup: name}, set: newItemSet(),
		open: func(ctx context.Context, file string) (io.ReadCloser, error) {
			return s.open(ctx, s.backupKey(name, file))
		}}
	return v.run(ctx, files, opts)
}

// run verifies the backup whose folder holds files.
func (v *verification) run(ctx context.Context, files []Object, opts VerifyOptions) (*VerifyReport, error) {
	name, rep := v.name, v.rep
	rep.Files = files
	present := map[string]Object{}
	for _, f := range files {
		present[f.Name] = f
	}
	for _, f := range []string{metadataFile, archiveFile(name), resourceListFile(name)} {
		if _, ok := present[f]; !ok {
			rep.problem(ProblemFile, f, "missing")
		}
	}
	for _, f := range []string{logsFile(name), resultsFile(name)} {
		if _, ok := present[f]; !ok {
			rep.Notes = append(rep.Notes, f+" is missing")
		}
	}
	if _, ok := present[metadataFile]; ok {
		if err := v.metadata(ctx); err != nil {
			return nil, err
		}
	}
	if _, ok := present[resourceListFile(name)]; ok {
		if err := v.resourceList(ctx); err != nil {
			return nil, err
		}
	}
	v.set.seal()
	for _, f := range []string{logsFile(name), resultsFile(name)} {
		if _, ok := present[f]; ok {
			if err := v.gzipFile(ctx, f); err != nil {
				return nil, err
			}
		}
	}
	if v.beforeArchive != nil {
		if err := v.beforeArchive(ctx); err != nil {
			return nil, err
		}
	}
	if obj, ok := present[archiveFile(name)]; ok {
		rep.ArchiveBytes = obj.Size
		if err := v.archive(ctx, obj.Size, opts); err != nil {
			return nil, err
		}
		if v.archiveRead {
			if err := v.compare(ctx); err != nil {
				return nil, err
			}
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

func unwrapDecode(err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Err
	}
	return err
}
