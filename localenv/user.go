package localenv

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/localenv/pki"
)

// User is a user of the environment's apiserver, authenticated by a client
// certificate from the environment's CA (see Env.AddUser).
type User struct {
	// Name is the user name RBAC subjects of kind User match (the
	// certificate's CommonName). Required.
	Name string
	// Groups are the groups RBAC subjects of kind Group match (the
	// certificate's Organization). The apiserver adds
	// system:authenticated.
	Groups []string
}

// AddUser returns a new rest.Config for the environment's first apiserver
// that authenticates as u: a client certificate for u signed by the
// environment's CA, which the apiserver trusts. It grants nothing: the
// user is Forbidden everywhere until an RBAC binding names it or one of
// its groups, which is what a test of your RBAC rules needs. It changes
// nothing in the cluster; any number of users can be added.
//
// It returns an error wrapping ErrInvalidConfig for a user without a name,
// ErrUnsupported without an apiserver of its own (SkipAPIServer, the kind
// provider) and ErrStopped after Stop.
func (e *Env) AddUser(u User) (*rest.Config, error) {
	if u.Name == "" {
		return nil, fmt.Errorf("%w: User.Name is required", ErrInvalidConfig)
	}
	if e.provider == Kind || e.ca == nil || e.rest == nil {
		return nil, fmt.Errorf("%w: AddUser needs the local provider and an apiserver", ErrUnsupported)
	}
	if e.isStopped() {
		return nil, ErrStopped
	}
	kp, err := e.ca.Issue(pki.Spec{CommonName: u.Name, Organization: u.Groups, Usage: pki.Client})
	if err != nil {
		return nil, fmt.Errorf("localenv: user %q: %w", u.Name, err)
	}
	rc := rest.CopyConfig(e.rest)
	rc.CertData, rc.KeyData = kp.CertPEM, kp.KeyPEM
	rc.CertFile, rc.KeyFile = "", ""
	return rc, nil
}
