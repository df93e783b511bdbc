package nodeagent

import "errors"

var (
	// ErrInvalidConfig is returned by Start for a configuration that cannot
	// work.
	ErrInvalidConfig = errors.New("nodeagent: invalid config")
	// ErrUnknownNode is returned by node operations for a node the agent
	// does not run.
	ErrUnknownNode = errors.New("nodeagent: unknown node")
	// ErrNotRunning is returned by KillContainer when the container has no
	// running process.
	ErrNotRunning = errors.New("nodeagent: container not running")
)
