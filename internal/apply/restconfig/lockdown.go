package restconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// fromKubeConfig parses a kubeconfig and refuses what the
// --insecure-kubeconfig-* flags do not allow: exec credential plugins (they
// run a program inside the controller) and skipped TLS verification; and,
// always, credentials and CAs read from the controller's disk and auth
// provider plugins.
func (r *Resolver) fromKubeConfig(data []byte, key types.NamespacedName) (*rest.Config, error) {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("KubeConfig secret '%s' holds an invalid kubeconfig: %w", key, err)
	}
	if err := r.checkUsers(kc, key); err != nil {
		return nil, err
	}
	if err := r.checkClusters(kc, key); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("KubeConfig secret '%s' holds an unusable kubeconfig: %w", key, err)
	}
	return cfg, nil
}

func refused(format string, args ...any) error {
	return &errs.Stalling{Err: fmt.Errorf(format, args...), Reason: InvalidKubeConfigReason}
}

func (r *Resolver) checkUsers(kc *clientcmdapi.Config, key types.NamespacedName) error {
	for name, auth := range kc.AuthInfos {
		switch {
		case auth.Exec != nil && !r.InsecureKubeConfigExec:
			return refused("KubeConfig secret '%s': user '%s' uses an exec credential plugin, which is refused unless the controller runs with --insecure-kubeconfig-exec", key, name)
		case auth.TokenFile != "" || auth.ClientCertificate != "" || auth.ClientKey != "":
			return refused("KubeConfig secret '%s': user '%s' refers to files on the controller's disk; embed the credentials instead", key, name)
		case auth.AuthProvider != nil:
			return refused("KubeConfig secret '%s': user '%s' uses an auth provider plugin, which weir does not run", key, name)
		}
	}
	return nil
}

func (r *Resolver) checkClusters(kc *clientcmdapi.Config, key types.NamespacedName) error {
	for name, cluster := range kc.Clusters {
		switch {
		case cluster.CertificateAuthority != "":
			return refused("KubeConfig secret '%s': cluster '%s' refers to a CA file on the controller's disk; embed certificate-authority-data instead", key, name)
		case cluster.InsecureSkipTLSVerify && !r.InsecureKubeConfigTLS:
			return refused("KubeConfig secret '%s': cluster '%s' skips TLS verification, which is refused unless the controller runs with --insecure-kubeconfig-tls", key, name)
		}
	}
	return nil
}
