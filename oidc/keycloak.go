package oidc

import (
	"bytes"
	"fmt"

	"github.com/cozystack/tenantkit/ref"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// keycloakAPIVersion is the API of the EDP Keycloak operator
// (github.com/epam/edp-keycloak-operator) that Cozystack runs.
const keycloakAPIVersion = "v1.edp.epam.com/v1"

// The localhost redirect URIs kubectl oidc-login listens on.
var loginRedirectURIs = []string{"http://localhost:8000", "http://localhost:18000"}

// RealmRef points an EDP object at its realm.
type RealmRef struct {
	// Name is the realm object's name ("keycloakrealm-cozy" for the
	// platform's).
	Name string `json:"name"`
	// Kind is the realm object's kind, ClusterKeycloakRealm.
	Kind string `json:"kind"`
}

// KeycloakClient is the EDP KeycloakClient object for a cluster: a public
// client with PKCE S256 for kubectl oidc-login, as the chart's
// templates/oidc-keycloak.yaml renders it. Only the fields Cozystack sets
// are modelled; the operator defaults the rest.
type KeycloakClient struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	// Spec is the client's settings.
	Spec KeycloakClientSpec `json:"spec"`
}

// KeycloakClientSpec is the spec of a KeycloakClient.
type KeycloakClientSpec struct {
	// ClientID is the cluster's client ID (ref.Cluster.ClientID).
	ClientID string `json:"clientId"`
	// Name is the client's display name in Keycloak; the chart sets the
	// client ID.
	Name string `json:"name"`
	// RealmRef is the platform realm.
	RealmRef RealmRef `json:"realmRef"`
	// Public makes it a public client (no secret; PKCE instead).
	Public bool `json:"public"`
	// DirectAccess allows the password grant.
	DirectAccess bool `json:"directAccess"`
	// AdvancedProtocolMappers turns on Keycloak's advanced mapper settings.
	AdvancedProtocolMappers bool `json:"advancedProtocolMappers"`
	// RedirectURIs are kubectl oidc-login's localhost callbacks.
	RedirectURIs []string `json:"redirectUris"`
	// DefaultClientScopes are groups and the cluster's audience scope.
	DefaultClientScopes []string `json:"defaultClientScopes"`
	// Attributes are Keycloak client attributes (PKCE S256 among them).
	Attributes map[string]string `json:"attributes"`
}

// KeycloakClientScope is the EDP KeycloakClientScope object that puts the
// cluster's client ID into the aud claim of ID and access tokens.
type KeycloakClientScope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	// Spec is the scope's settings.
	Spec KeycloakClientScopeSpec `json:"spec"`
}

// KeycloakClientScopeSpec is the spec of a KeycloakClientScope.
type KeycloakClientScopeSpec struct {
	// Name is the scope's name (ref.Cluster.AudienceScope).
	Name string `json:"name"`
	// RealmRef is the platform realm.
	RealmRef RealmRef `json:"realmRef"`
	// Protocol is openid-connect.
	Protocol string `json:"protocol"`
	// Default makes it a realm default scope (false: the client asks).
	Default bool `json:"default"`
	// Description is shown in Keycloak's console.
	Description string `json:"description,omitempty"`
	// Attributes are Keycloak scope attributes.
	Attributes map[string]string `json:"attributes"`
	// ProtocolMappers hold the audience mapper.
	ProtocolMappers []ProtocolMapper `json:"protocolMappers"`
}

// ProtocolMapper is a Keycloak protocol mapper.
type ProtocolMapper struct {
	// Name is the mapper's name.
	Name string `json:"name"`
	// Protocol is openid-connect.
	Protocol string `json:"protocol"`
	// ProtocolMapper is the mapper type, such as oidc-audience-mapper.
	ProtocolMapper string `json:"protocolMapper"`
	// Config is the mapper's settings.
	Config map[string]string `json:"config"`
}

// NewKeycloakClient returns cluster c's client in the platform realm, as
// the chart renders it: named and titled after the client ID, public, PKCE
// S256, no direct access grants, redirect URIs localhost:8000 and :18000,
// default scopes groups and the cluster's audience scope. Like the chart's,
// it carries no labels.
func NewKeycloakClient(c ref.Cluster) KeycloakClient {
	return KeycloakClient{
		TypeMeta:   metav1.TypeMeta{APIVersion: keycloakAPIVersion, Kind: "KeycloakClient"},
		ObjectMeta: metav1.ObjectMeta{Name: c.ClientID(), Namespace: c.Namespace},
		Spec: KeycloakClientSpec{
			ClientID:                c.ClientID(),
			Name:                    c.ClientID(),
			RealmRef:                RealmRef{Name: systemRealmRef, Kind: "ClusterKeycloakRealm"},
			Public:                  true,
			AdvancedProtocolMappers: true,
			RedirectURIs:            append([]string(nil), loginRedirectURIs...),
			DefaultClientScopes:     []string{"groups", c.AudienceScope()},
			Attributes: map[string]string{
				"pkce.code.challenge.method": "S256",
				"post.logout.redirect.uris":  "+",
			},
		},
	}
}

// NewKeycloakClientScope returns cluster c's audience scope, as the chart
// renders it: an oidc-audience-mapper adding the client ID to ID, access
// and introspection tokens, the chart's description, no labels.
func NewKeycloakClientScope(c ref.Cluster) KeycloakClientScope {
	return KeycloakClientScope{
		TypeMeta:   metav1.TypeMeta{APIVersion: keycloakAPIVersion, Kind: "KeycloakClientScope"},
		ObjectMeta: metav1.ObjectMeta{Name: c.AudienceScope(), Namespace: c.Namespace},
		Spec: KeycloakClientScopeSpec{
			Name:        c.AudienceScope(),
			RealmRef:    RealmRef{Name: systemRealmRef, Kind: "ClusterKeycloakRealm"},
			Protocol:    "openid-connect",
			Description: "Per-cluster audience for tenant kube-apiserver " + c.Release(),
			Attributes:  map[string]string{"include.in.token.scope": "true"},
			ProtocolMappers: []ProtocolMapper{{
				Name:           "audience",
				Protocol:       "openid-connect",
				ProtocolMapper: "oidc-audience-mapper",
				Config: map[string]string{
					"included.client.audience":  c.ClientID(),
					"id.token.claim":            "true",
					"access.token.claim":        "true",
					"introspection.token.claim": "true",
					"lightweight.claim":         "false",
				},
			}},
		},
	}
}

// KeycloakYAML renders cluster c's KeycloakClientScope and KeycloakClient
// as one multi-document YAML stream, ready for kubectl apply.
func KeycloakYAML(c ref.Cluster) ([]byte, error) {
	return yamlDocuments(NewKeycloakClientScope(c), NewKeycloakClient(c))
}

// yamlDocuments renders objects as a YAML stream separated by "---".
func yamlDocuments(objs ...any) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("render %T: %w", o, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(data)
	}
	return buf.Bytes(), nil
}
