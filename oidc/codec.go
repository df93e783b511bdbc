package oidc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"sigs.k8s.io/yaml"
)

// The config API versions the renderer emits.
var (
	// APIVersionV1 is apiserver.config.k8s.io/v1, served from Kubernetes 1.34.
	APIVersionV1 = apiserverv1.SchemeGroupVersion
	// APIVersionV1Beta1 is apiserver.config.k8s.io/v1beta1, served from 1.30.
	APIVersionV1Beta1 = apiserverv1beta1.ConfigSchemeGroupVersion
)

// scheme knows the apiserver config types; codecs decodes strictly, as
// kube-apiserver does: an unknown or duplicate field is an error.
var (
	scheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		install.Install(s)
		return s
	}()
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

// compiled caches CompileAndValidateJWTAuthenticator's result by
// configuration, so that verifiers built again for the same JWT
// authenticator (one per request, or per reload) compile its CEL once.
var compiled = struct {
	sync.Mutex
	m map[string]authenticationcel.CELMapper
}{m: map[string]authenticationcel.CELMapper{}}

const maxCompiled = 256

// compileJWT validates jwt with the apiserver's validation and compiles its
// CEL expressions, once per distinct configuration.
func compileJWT(jwt apiserver.JWTAuthenticator, disallowedIssuers []string) (authenticationcel.CELMapper, error) {
	key, err := json.Marshal(struct {
		JWT        apiserver.JWTAuthenticator
		Disallowed []string
	}{jwt, disallowedIssuers})
	if err != nil {
		return authenticationcel.CELMapper{}, fmt.Errorf("%w: encode configuration: %w", ErrInvalidConfig, err)
	}
	compiled.Lock()
	m, ok := compiled.m[string(key)]
	compiled.Unlock()
	if ok {
		return m, nil
	}
	m, errs := validation.CompileAndValidateJWTAuthenticator(celCompiler(), jwt, disallowedIssuers)
	if len(errs) > 0 {
		return authenticationcel.CELMapper{}, &ConfigError{Errs: errs}
	}
	compiled.Lock()
	if len(compiled.m) >= maxCompiled {
		clear(compiled.m)
	}
	compiled.m[string(key)] = m
	compiled.Unlock()
	return m, nil
}

// celCompiler is the apiserver's own CEL compiler for claim and user
// expressions. Building its environment takes milliseconds, so it is shared.
var celCompiler = sync.OnceValue(authenticationcel.NewDefaultCompiler)

// ErrConfigAPIVersion is returned for an inline custom
// AuthenticationConfiguration whose apiVersion the cluster's Kubernetes
// version does not load, such as apiserver.config.k8s.io/v1 on 1.31:
// kube-apiserver would refuse to start (tenant.AuthenticationConfigLoads).
var ErrConfigAPIVersion = errors.New("oidc: the cluster's Kubernetes version does not load the configuration's apiVersion")

// EncodeAuthenticationConfiguration renders cfg as YAML in the API version
// gv (APIVersionV1 or APIVersionV1Beta1), after checking it with the
// apiserver's validation. Keys are sorted and empty optional fields left
// out, as kubectl prints objects.
func EncodeAuthenticationConfiguration(cfg *apiserver.AuthenticationConfiguration, gv schema.GroupVersion) ([]byte, error) {
	if gv != APIVersionV1 && gv != APIVersionV1Beta1 {
		return nil, invalidf("cannot render API version %s", gv)
	}
	if err := validateAuthenticationConfiguration(cfg); err != nil {
		return nil, err
	}
	out, err := scheme.ConvertToVersion(cfg.DeepCopy(), gv)
	if err != nil {
		return nil, fmt.Errorf("convert authentication configuration: %w", err)
	}
	out.GetObjectKind().SetGroupVersionKind(gv.WithKind("AuthenticationConfiguration"))
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	return yaml.Marshal(pruneEmpty(doc))
}

// pruneEmpty drops empty objects and empty optional strings the versioned
// types cannot omit (uid: {}, discoveryURL: "").
func pruneEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = pruneEmpty(e)
			if m, ok := e.(map[string]any); ok && len(m) == 0 {
				delete(t, k)
				continue
			}
			if s, ok := e.(string); ok && s == "" && k == "discoveryURL" {
				delete(t, k)
				continue
			}
			t[k] = e
		}
	case []any:
		for i := range t {
			t[i] = pruneEmpty(t[i])
		}
	}
	return v
}

// ParseAuthenticationConfiguration decodes an AuthenticationConfiguration
// file (any served version) the way kube-apiserver loads
// --authentication-config, strictly, and validates it with the apiserver's
// validation. The result is the internal (hub) type that validation and the
// Verifier take.
func ParseAuthenticationConfiguration(data []byte) (*apiserver.AuthenticationConfiguration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, invalidf("empty authentication configuration")
	}
	obj, err := runtime.Decode(codecs.UniversalDecoder(), data)
	if err != nil {
		return nil, invalidf("decode authentication configuration: %w", err)
	}
	cfg, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok || cfg == nil {
		return nil, invalidf("expected AuthenticationConfiguration, got %T", obj)
	}
	if err := validateAuthenticationConfiguration(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// validateAuthenticationConfiguration runs k8s.io/apiserver's validation,
// CEL compilation included, on cfg. disallowedIssuers are the apiserver's
// --service-account-issuer values, which no JWT issuer may reuse. The
// error is a *ConfigError.
func validateAuthenticationConfiguration(cfg *apiserver.AuthenticationConfiguration, disallowedIssuers ...string) error {
	if cfg == nil {
		return invalidf("nil authentication configuration")
	}
	if errs := validation.ValidateAuthenticationConfiguration(celCompiler(), cfg, disallowedIssuers); len(errs) > 0 {
		return &ConfigError{Errs: errs}
	}
	return nil
}
