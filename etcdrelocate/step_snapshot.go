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
// completes before anything changes. A snapshot an earlier run recorded
// is relied on only while its file still has the recorded size and
// SHA-256; else it is taken again.
func (snapshotStep) Run(ctx context.Context, x *run) (string, bool, error) {
	why, err := proveSnapshot(ctx, x)
	if err != nil {
		return "", false, err
	}
	if x.cp.SnapshotPath != "" {
		return fmt.Sprintf("taken earlier: %s (%d bytes; size and SHA-256 as recorded)", x.cp.SnapshotPath, x.cp.SnapshotBytes), true, nil
	}
	msg, skipped, err := takeOrStartSnapshot(ctx, x)
	if why != "" && err == nil {
		msg = why + "; taken again: " + msg
	}
	return msg, skipped, err
}

// takeOrStartSnapshot takes the snapshot, or starts streaming it in the
// background.
func takeOrStartSnapshot(ctx context.Context, x *run) (string, bool, error) {
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
	f, err := takeSnapshot(ctx, x.conn, src.ClientURLs[0], dir, name)
	if err != nil {
		return "", false, err
	}
	if err := recordSnapshot(ctx, x, f); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%d bytes from %s to %s", f.bytes, memberLabel(src), f.path), false, nil
}
