package backup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// verification is one run of Verify.
type verification struct {
	// open opens a file of the backup's folder; a *fetchError (or the
	// context's error) is a failure to reach the bucket, any other error a
	// problem with the backup.
	open   func(ctx context.Context, file string) (io.ReadCloser, error)
	name   string
	rep    *VerifyReport
	set    *itemSet
	backup *velerov1.Backup // nil when velero-backup.json is missing or bad
	scan   archiveScan
	// archiveRead says the archive was read to its end, so comparing its
	// items with the list and the progress means something.
	archiveRead bool
	// Hooks for PlanRestore, which verifies and plans in one read:
	// listed sees each resource list entry, beforeArchive runs between
	// the resource list and the archive, visit sees each item.
	listed        func(gvk, item string)
	beforeArchive func(ctx context.Context) error
	visit         func(p itemPath, id *itemID, body []byte)
}

// report turns err into a problem (see problemKind) or, when it is about
// reaching the bucket, returns it.
func (v *verification) report(ctx context.Context, file string, err error) error {
	if transient(ctx, err) {
		return fmt.Errorf("verify %s: %w", v.name, err)
	}
	v.rep.problem(problemKind(err), file, "%v", unwrapDecode(err))
	return nil
}

// problemKind classifies an error reading a file of the backup.
func problemKind(err error) ProblemKind {
	var corrupt flate.CorruptInputError
	var de *DecodeError
	switch {
	case errors.Is(err, ErrNotFound):
		return ProblemFile
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return ProblemTruncated
	case errors.Is(err, errNotGzip) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, tar.ErrHeader) || errors.As(err, &corrupt):
		return ProblemStream
	case errors.As(err, &de):
		return ProblemFile
	}
	return ProblemStream
}

func (v *verification) metadata(ctx context.Context) error {
	b, err := v.readBackup(ctx)
	if err != nil {
		return v.report(ctx, metadataFile, err)
	}
	v.backup = b
	v.rep.Phase = string(b.Status.Phase)
	if b.Name != v.name {
		v.rep.problem(ProblemPhase, metadataFile, "names backup %q, not %q", b.Name, v.name)
	}
	switch b.Status.Phase {
	case velerov1.BackupPhaseCompleted:
	case velerov1.BackupPhasePartiallyFailed:
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("phase PartiallyFailed (%d errors, %d warnings)", b.Status.Errors, b.Status.Warnings))
	case velerov1.BackupPhaseFailed:
		v.rep.problem(ProblemPhase, metadataFile, "backup failed: %s", b.Status.FailureReason)
	default:
		v.rep.problem(ProblemPhase, metadataFile, "phase %q is not final (Velero has not finished this backup)", b.Status.Phase)
	}
	return nil
}

func (v *verification) readBackup(ctx context.Context) (*velerov1.Backup, error) {
	r, err := v.open(ctx, metadataFile)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxJSONSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJSONSize {
		return nil, &DecodeError{File: metadataFile, Err: fmt.Errorf("larger than %d bytes", maxJSONSize)}
	}
	return DecodeBackup(data)
}

func (v *verification) openGzip(ctx context.Context, file string) (*gzipReadCloser, error) {
	r, err := v.open(ctx, file)
	if err != nil {
		return nil, err
	}
	zr, err := newGzipReader(r, file)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &gzipReadCloser{gzipStream: zr, closer: r}, nil
}

// resourceList streams the resource list into the item set.
func (v *verification) resourceList(ctx context.Context) error {
	file := resourceListFile(v.name)
	rc, err := v.openGzip(ctx, file)
	if err != nil {
		return v.report(ctx, file, err)
	}
	defer rc.Close()
	rc.single()
	err = scanResourceList(rc, func(gvk, item string) {
		v.set.addListed(v.set.hash(gvk, item))
		v.rep.ListedItems++
		if v.listed != nil {
			v.listed(gvk, item)
		}
	})
	if err == nil {
		err = v.gzipEnd(file, rc)
	}
	if err != nil {
		v.set.hashes = nil
		return v.report(ctx, file, err)
	}
	v.set.listed = true
	return nil
}

// gzipEnd reads rc to the end of its gzip member (so the CRC and length
// are checked) and reports any data after it.
func (v *verification) gzipEnd(file string, rc *gzipReadCloser) error {
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	if rc.more() {
		v.rep.problem(ProblemTrailingData, file, "data after the gzip stream (a second gzip member?)")
	}
	return nil
}

func (v *verification) gzipFile(ctx context.Context, file string) error {
	rc, err := v.openGzip(ctx, file)
	if err == nil {
		defer rc.Close()
		rc.single()
		err = v.gzipEnd(file, rc)
	}
	if err != nil {
		return v.report(ctx, file, err)
	}
	return nil
}

// archive streams <name>.tar.gz through gzip and tar.
func (v *verification) archive(ctx context.Context, size int64, opts VerifyOptions) error {
	file := archiveFile(v.name)
	r, err := v.open(ctx, file)
	if err != nil {
		return v.report(ctx, file, err)
	}
	defer r.Close()
	ra := newReadAhead(r, 1<<20, 4)
	defer ra.stop()
	var src io.Reader = ra
	if opts.Progress != nil {
		src = &progressReader{r: ra, total: size, fn: opts.Progress}
	}
	zr, err := newGzipReader(src, file)
	if err != nil {
		return v.report(ctx, file, err)
	}
	zr.single()
	v.scan = archiveScan{rep: v.rep, set: v.set, file: file, visit: v.visit}
	if err := v.scan.read(zr); err != nil {
		return v.report(ctx, file, err)
	}
	if zr.more() {
		v.rep.problem(ProblemTrailingData, file, "data after the gzip stream (a second gzip member?)")
	}
	if v.rep.FormatVersion == "" {
		v.rep.problem(ProblemFile, file, "metadata/version is missing")
	}
	v.archiveRead = true
	return nil
}

// compare checks status.progress and the resource list against the
// archive, item by item.
func (v *verification) compare(ctx context.Context) error {
	partial := v.backup != nil && v.backup.Status.Phase == velerov1.BackupPhasePartiallyFailed
	v.progress(partial)
	if !v.set.listed {
		return nil
	}
	want := map[uint64]uint8{}
	leftOut := 0
	mark := func(h uint64, r uint8) {
		if _, ok := want[h]; ok || len(want) < 2*maxProblems {
			want[h] |= r
			return
		}
		leftOut++
	}
	for _, h := range v.set.dups {
		mark(h, reasonDup)
	}
	anyPref := v.scan.preferred > 0
	c := &v.set.copies
	for i, h := range v.set.hashes {
		unversioned, pref, other := c[copyUnversioned].has(i), c[copyPreferred].has(i), c[copyOther].has(i)
		switch {
		case !unversioned && !other && !pref:
			mark(h, reasonMissing)
		case !unversioned && !other:
			mark(h, reasonPrefOnly)
		case anyPref && unversioned && !pref:
			mark(h, reasonNoPref)
		}
	}
	if len(want) == 0 {
		return nil
	}
	if err := v.nameListed(ctx, want, partial); err != nil {
		return err
	}
	v.rep.ProblemsLeftOut += leftOut
	return nil
}

// Why a listed item is named in the report.
const (
	reasonMissing uint8 = 1 << iota
	reasonPrefOnly
	reasonNoPref
	reasonDup
)

// nameListed reads the resource list again to name the items in want:
// the item set holds only hashes. It runs only for a damaged backup.
func (v *verification) nameListed(ctx context.Context, want map[uint64]uint8, partial bool) error {
	file := resourceListFile(v.name)
	rc, err := v.openGzip(ctx, file)
	if err != nil {
		return v.report(ctx, file, err)
	}
	defer rc.Close()
	arch := archiveFile(v.name)
	err = scanResourceList(rc, func(gvk, item string) {
		h := v.set.hash(gvk, item)
		r, ok := want[h]
		if !ok {
			return
		}
		delete(want, h)
		id := gvk + " " + item
		if r&reasonDup != 0 {
			v.rep.itemProblem(ProblemDuplicate, file, id, "is in the resource list more than once")
		}
		switch {
		case r&reasonMissing != 0 && partial:
			v.rep.Notes = appendCapped(v.rep.Notes, id+" is listed but not in the archive (Velero lists the items whose backup failed)")
		case r&reasonMissing != 0:
			v.rep.itemProblem(ProblemMissing, arch, id, "is in the resource list but not in the archive")
		case r&reasonPrefOnly != 0:
			v.rep.itemProblem(ProblemPreferredCopy, arch, id, "only its preferred-version copy is in the archive")
		case r&reasonNoPref != 0:
			v.rep.itemProblem(ProblemPreferredCopy, arch, id, "has no preferred-version copy in the archive")
		}
	})
	if err != nil {
		return v.report(ctx, file, err)
	}
	return nil
}

// progress checks velero-backup.json's status.progress: Velero sets both
// counts to the number of items it backed up (the resource list's
// entries), so they match the archive's items (unversioned and
// other-version copies). Items that failed in a PartiallyFailed backup
// stay counted and listed, with no copy in the archive.
func (v *verification) progress(partial bool) {
	b := v.backup
	if b == nil || (b.Status.Phase != velerov1.BackupPhaseCompleted && !partial) {
		return
	}
	p := b.Status.Progress
	if p == nil {
		v.rep.problem(ProblemProgress, metadataFile, "status.progress is missing")
		return
	}
	if p.TotalItems != p.ItemsBackedUp {
		v.rep.problem(ProblemProgress, metadataFile, "status.progress reports %d of %d items backed up", p.ItemsBackedUp, p.TotalItems)
	}
	switch {
	case partial && v.set.listed && p.ItemsBackedUp != v.rep.ListedItems:
		v.rep.problem(ProblemProgress, metadataFile, "status.progress reports %d items, the resource list %d", p.ItemsBackedUp, v.rep.ListedItems)
	case !partial && p.ItemsBackedUp != v.scan.listable:
		v.rep.problem(ProblemProgress, metadataFile, "status.progress reports %d items, the archive %d", p.ItemsBackedUp, v.scan.listable)
	}
}
