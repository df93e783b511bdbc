package etcdrelocate

import (
	"context"
	"fmt"
)

// snapshotStep takes, or starts streaming, the snapshot.
type snapshotStep struct{}

// Info declares the step.
func (snapshotStep) Info() stepInfo {
	return stepInfo{kind: StepSnapshot, does: "stream a snapshot from a healthy voter other than the member", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (snapshotStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	if p.snapshotFirst() {
		return stepText{fmt.Sprintf("stream a snapshot from a healthy voter other than %s to %s", m.label(), p.snapshotDir()),
			"the source voter is healthy", "the snapshot is non-empty and its sha256 trailer verifies"}, !p.Restore && !p.Options.SkipSnapshot
	}
	return stepText{fmt.Sprintf("start streaming a snapshot from a healthy follower other than %s to %s; it streams while the member moves", m.label(), p.snapshotDir()),
		"the source voter is healthy", "release-volume deletes the old volume only after the snapshot's sha256 trailer verified"}, !p.Restore && !p.Options.SkipSnapshot
}

// Run is the snapshot step. In the StatefulSet layout the snapshot
// streams in the background while the member moves: the old member's volume
// is kept (reclaim policy Retain) until release-volume, which deletes it
// only once the snapshot has verified, so the data always exists in a form
// outside the cluster's voters. With Options.SnapshotFirst, and in the
// v1alpha2 layouts (the operator deletes the old claim), the snapshot
// completes before anything changes.
func (snapshotStep) Run(ctx context.Context, x *run) (string, bool, error) {
	if x.cp.SnapshotPath != "" {
		x.res.SnapshotPath = x.cp.SnapshotPath
		return "taken earlier: " + x.cp.SnapshotPath, true, nil
	}
	src, err := snapshotSource(ctx, x)
	if err != nil {
		return "", false, err
	}
	dir := x.p.Options.SnapshotDir
	if dir == "" {
		dir = defaultSnapshotDir()
	}
	name := snapshotName(x.p)
	if !x.p.snapshotFirst() {
		x.snap = startSnapshot(x.bg, x.conn, src.ClientURLs[0], dir, name, memberLabel(src))
		return fmt.Sprintf("streaming from %s to %s in the background; the old volume stays until it verifies", memberLabel(src), dir), false, nil
	}
	path, n, err := takeSnapshot(ctx, x.conn, src.ClientURLs[0], dir, name)
	if err != nil {
		return "", false, err
	}
	if err := recordSnapshot(ctx, x, path, n); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%d bytes from %s to %s", n, memberLabel(src), path), false, nil
}
