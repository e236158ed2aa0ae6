package app

import (
	"time"

	"github.com/spf13/pflag"
)

// FluxOnlyFlags are flags of Flux's controllers that weir-controller
// accepts, so that Deployments and patches written for Flux's start
// unchanged. Some are acted on (the token cache, the default ServiceAccounts,
// --sops-age-secret, --sops-vault-configmap); the others tune a part weir
// does not have (helm-controller's OOM watch and HTTP timeout, …) and their
// help says "not used by weir yet". Names, types and defaults are Flux's.
type FluxOnlyFlags struct {
	TokenCacheMaxSize     int
	TokenCacheMaxDuration time.Duration
	ExportHTTPPathMetrics bool
	DefaultKubeConfigSA   string
	DefaultDecryptionSA   string
	SOPSAgeSecret         string
	SOPSVaultConfigMap    string
	HTTPTimeout           time.Duration
	OOMWatchThreshold     uint8
	OOMWatchInterval      time.Duration
	OOMWatchMaxMemoryPath string
	OOMWatchCurMemoryPath string
	SnapshotDigestAlgo    string
	SSHKexAlgos           []string
	SSHHostKeyAlgos       []string
}

func defaultFluxOnlyFlags() FluxOnlyFlags {
	return FluxOnlyFlags{
		TokenCacheMaxSize:     100,
		TokenCacheMaxDuration: time.Hour,
		HTTPTimeout:           30 * time.Second,
		OOMWatchThreshold:     95,
		OOMWatchInterval:      500 * time.Millisecond,
		SnapshotDigestAlgo:    "sha256",
	}
}

// notYet marks the help of a flag weir accepts but does not use.
func notYet(controller, help string) string {
	return help + " (" + controller + "'s flag; accepted, not used by weir yet)"
}

func (f *FluxOnlyFlags) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&f.TokenCacheMaxSize, "token-cache-max-size", f.TokenCacheMaxSize, "maximum number of cached cloud provider tokens; 0 disables the cache")
	fs.DurationVar(&f.TokenCacheMaxDuration, "token-cache-max-duration", f.TokenCacheMaxDuration, "longest a cloud provider token is cached; capped at 1h")
	fs.BoolVar(&f.ExportHTTPPathMetrics, "export-http-path-metrics", f.ExportHTTPPathMetrics, notYet("notification-controller", "label HTTP metrics with the request path"))
	fs.StringVar(&f.DefaultKubeConfigSA, "default-kubeconfig-service-account", f.DefaultKubeConfigSA, "default service account (in the object's namespace) whose token spec.kubeConfig.configMapRef presents when the ConfigMap names none, with the ObjectLevelWorkloadIdentity gate on")
	fs.StringVar(&f.DefaultDecryptionSA, "default-decryption-service-account", f.DefaultDecryptionSA, "default ServiceAccount, in the Kustomization's namespace, whose identity SOPS decryption uses when spec.decryption names none (needs the ObjectLevelWorkloadIdentity gate)")
	fs.StringVar(&f.SOPSAgeSecret, "sops-age-secret", f.SOPSAgeSecret, "Secret in the controller's namespace whose age keys decrypt SOPS content for a Kustomization whose spec.decryption names no Secret")
	fs.StringVar(&f.SOPSVaultConfigMap, "sops-vault-configmap", f.SOPSVaultConfigMap, "ConfigMap in the controller's namespace whose config.yaml lists the Vault/OpenBao instances (address, loginPath) SOPS decryption logs in to with a ServiceAccount token when the decryption Secret has no sops.vault-token")
	fs.DurationVar(&f.HTTPTimeout, "http-timeout", f.HTTPTimeout, notYet("helm-controller", "timeout of a chart download"))
	fs.Uint8Var(&f.OOMWatchThreshold, "oom-watch-memory-threshold", f.OOMWatchThreshold, notYet("helm-controller", "memory use in percent of the limit at which Helm actions are cancelled"))
	fs.DurationVar(&f.OOMWatchInterval, "oom-watch-interval", f.OOMWatchInterval, notYet("helm-controller", "how often memory use is checked"))
	fs.StringVar(&f.OOMWatchMaxMemoryPath, "oom-watch-max-memory-path", f.OOMWatchMaxMemoryPath, notYet("helm-controller", "cgroup file with the memory limit"))
	fs.StringVar(&f.OOMWatchCurMemoryPath, "oom-watch-current-memory-path", f.OOMWatchCurMemoryPath, notYet("helm-controller", "cgroup file with the memory use"))
	fs.StringVar(&f.SnapshotDigestAlgo, "snapshot-digest-algo", f.SnapshotDigestAlgo, notYet("helm-controller", "digest algorithm of release snapshots"))
	fs.StringSliceVar(&f.SSHKexAlgos, "ssh-kex-algos", f.SSHKexAlgos, notYet("source-controller and image-automation-controller", "SSH key exchange algorithms"))
	fs.StringSliceVar(&f.SSHHostKeyAlgos, "ssh-hostkey-algos", f.SSHHostKeyAlgos, notYet("source-controller and image-automation-controller", "SSH host key algorithms"))
}
