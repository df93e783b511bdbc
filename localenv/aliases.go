package localenv

import (
	"github.com/cozystack/tenantkit/internal/process"
)

// Process is a server process of the environment (Component.Process,
// Cluster.Processes): Name, PID, LogPath, Running, Done, Stop (SIGTERM,
// then SIGKILL after a grace period), Kill and LogTail. It is defined by
// the environment's internal process supervisor and named here so that
// programs using the environment can name it too.
type Process = process.Process
