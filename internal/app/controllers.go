package app

import "context"

// controller is one reconciler group weir-controller can run.
type controller struct {
	name  string
	setup func(ctx context.Context, deps *Deps) error
}

// registry lists every controller weir-controller knows, in start order.
// Names follow Flux's components without the "-controller" suffix.
var registry = []controller{
	{name: "source", setup: setupSource},
	{name: "source-watcher", setup: setupSourceWatcher},
	{name: "kustomize", setup: setupKustomize},
	{name: "helm", setup: setupHelm},
	{name: "notification", setup: setupNotification},
	{name: "image-reflector", setup: setupImageReflector},
	{name: "image-automation", setup: setupImageAutomation},
	// The web UI is no controller, but a component of the same binary
	// (one image, one set of flags): --controllers=ui serves it. "*"
	// leaves it out, so a controller pod never serves it by surprise.
	{name: "ui", setup: setupUI},
}

// optIn are the names "*" leaves out: each must be named.
var optIn = []string{"ui"}

// AllControllers returns the names --controllers accepts.
func AllControllers() []string {
	names := make([]string, 0, len(registry))
	for _, c := range registry {
		names = append(names, c.name)
	}
	return names
}
