package app

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// newClient is the manager's client. With --watch-label-selector the cache
// holds only the shard's objects, yet a shard's objects refer to the main
// shard's (a Kustomization of shard1 depends on, or reads the
// GitRepository of, an unlabelled one): a read the cache answers with
// NotFound is asked of the API server once more, so references across
// shards resolve. Lists stay the cache's, so each shard sees only its own,
// and so does a reconcile's read of its own object (reconcile.OwnRead): an
// object relabelled to another shard leaves this one.
func newClient(selector string) func(*rest.Config, client.Options) (client.Client, error) {
	return func(cfg *rest.Config, o client.Options) (client.Client, error) {
		cached, err := client.New(cfg, o)
		if err != nil || selector == "" {
			return cached, err
		}
		direct, err := client.New(cfg, client.Options{Scheme: o.Scheme, Mapper: o.Mapper, HTTPClient: o.HTTPClient})
		if err != nil {
			return nil, fmt.Errorf("creating the uncached client: %w", err)
		}
		return shardClient{Client: cached, direct: direct}, nil
	}
}

// shardClient reads through the cache, then, where the cache does not
// hold the object, through direct.
type shardClient struct {
	client.Client
	direct client.Reader
}

func (c shardClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && !reconcile.IsOwnRead(ctx) {
		return c.direct.Get(ctx, key, obj, opts...)
	}
	return err
}
