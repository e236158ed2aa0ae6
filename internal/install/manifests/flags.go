package manifests

import "github.com/spf13/pflag"

// BindFlags registers the flags `flux install` and `flux bootstrap` share
// for the generated manifests (--components … --cluster-domain), and weir's
// --layout, on fs. The namespace comes from the global -n.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Components, "components", o.Components,
		"list of components, accepts comma-separated values (weir installs those it has controllers for)")
	fs.StringSliceVar(&o.ComponentsExtra, "components-extra", nil,
		"list of components in addition to those supplied or defaulted, accepts values such as 'image-reflector-controller,image-automation-controller,source-watcher'")
	fs.StringVar(&o.Registry, "registry", o.Registry, "container registry where the weir-controller image is published")
	fs.StringVar(&o.ImagePullSecret, "image-pull-secret", "", "Kubernetes secret name used for pulling the controller image from a private registry")
	fs.StringVar(&o.RegistryCredential, "registry-creds", "", "container registry credentials in the format 'user:password', requires --image-pull-secret to be set")
	fs.BoolVar(&o.NetworkPolicy, "network-policy", o.NetworkPolicy, "deny ingress access to the controllers from other namespaces using network policies")
	fs.BoolVar(&o.WatchAllNamespaces, "watch-all-namespaces", o.WatchAllNamespaces,
		"watch for custom resources in all namespaces, if set to false it will only watch the namespace where weir is installed")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log level, accepts 'debug', 'info', 'error'")
	fs.StringSliceVar(&o.TolerationKeys, "toleration-keys", nil,
		"list of toleration keys used to schedule the controller pods onto nodes with matching taints")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "internal cluster domain")
	fs.StringVar((*string)(&o.Layout), "layout", string(o.Layout),
		"split: one Deployment per component, named as Flux names them; single: one weir-controller Deployment running every controller")
	fs.StringSliceVar(&o.Shards, "shards", nil,
		"list of shard names, accepts comma-separated values: each runs its own source, kustomize and helm controllers, "+
			"reconciling the objects labelled sharding.fluxcd.io/key=<shard>")
	fs.StringVar(&o.ShardMode, "shard-mode", o.ShardMode,
		"off, or auto: the source, kustomize and helm controllers run --replicas active replicas that share the objects "+
			"by consistent hashing (each advertises its pod IP for its artifacts)")
	fs.IntVar(&o.Replicas, "replicas", o.Replicas, "replicas of the source, kustomize and helm controllers' Deployments (more than one needs --shard-mode=auto)")
}
