package serverbin

// VersityGW is the Versity S3 gateway v1.8.0 with its POSIX backend: the
// local environment's S3 server (see internal/servers/versitygw).
var VersityGW = Server{Name: "versitygw", Module: "versitygw", Package: "./cmd/versitygw",
	Upstream: "github.com/versity/versitygw", Version: "v1.8.0"}
