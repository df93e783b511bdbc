package etcdrelocatetest

import (
	"context"
	"fmt"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RaiseAlarm raises an alarm (pb.AlarmType_NOSPACE or pb.AlarmType_CORRUPT)
// for member memberID through the Alarm RPC, as etcd itself does when the
// backend quota is exceeded or corruption is detected. clientv3 exposes only
// list and disarm; the RPC also accepts ACTIVATE. Disarm with
// cli.AlarmDisarm.
func RaiseAlarm(ctx context.Context, cli *clientv3.Client, memberID uint64, alarm pb.AlarmType) error {
	_, err := pb.NewMaintenanceClient(cli.ActiveConnection()).Alarm(ctx, &pb.AlarmRequest{
		Action: pb.AlarmRequest_ACTIVATE, MemberID: memberID, Alarm: alarm,
	})
	if err != nil {
		return fmt.Errorf("etcdrelocatetest: raise %s on %x: %w", alarm, memberID, err)
	}
	return nil
}

// RaiseAlarmT is RaiseAlarm for tests: it fails the test on an error.
func RaiseAlarmT(t testing.TB, ctx context.Context, cli *clientv3.Client, memberID uint64, alarm pb.AlarmType) {
	t.Helper()
	if err := RaiseAlarm(ctx, cli, memberID, alarm); err != nil {
		t.Fatal(err)
	}
}
