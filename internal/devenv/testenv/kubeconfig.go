package testenv

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeConfig renders cfg (the test API server's admin config) as a
// kubeconfig with embedded credentials, for spec.kubeConfig Secrets that
// point a "remote" cluster at the same API server; change edits it (an exec
// plugin, skipped TLS verification) before it is written.
func KubeConfig(t testing.TB, cfg *rest.Config, change func(*clientcmdapi.Config)) []byte {
	t.Helper()
	read := func(data []byte, file string) []byte {
		if len(data) > 0 || file == "" {
			return data
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["remote"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: read(cfg.CAData, cfg.CAFile)}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: read(cfg.CertData, cfg.CertFile), ClientKeyData: read(cfg.KeyData, cfg.KeyFile),
	}
	kc.Contexts["remote"] = &clientcmdapi.Context{Cluster: "remote", AuthInfo: "admin"}
	kc.CurrentContext = "remote"
	if change != nil {
		change(kc)
	}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
