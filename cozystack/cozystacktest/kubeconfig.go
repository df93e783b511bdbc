package cozystacktest

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders a kubeconfig for the apiserver rc describes, with one
// cluster, user and context named name, carrying rc's CA, client
// certificate or bearer token inline, as Kamaji's admin kubeconfigs do.
func Kubeconfig(name string, rc *rest.Config) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   rc.Host,
		CertificateAuthorityData: rc.CAData,
		TLSServerName:            rc.ServerName,
		InsecureSkipTLSVerify:    rc.Insecure,
	}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: rc.CertData,
		ClientKeyData:         rc.KeyData,
		Token:                 rc.BearerToken,
	}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("cozystacktest: render kubeconfig: %w", err)
	}
	return data, nil
}
