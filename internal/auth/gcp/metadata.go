package gcp

import (
	"context"
	"fmt"

	"cloud.google.com/go/compute/metadata"
)

// gkeCluster is what the metadata server says of the cluster the
// controller runs in; it does not change while the Pod lives.
type gkeCluster struct {
	projectID, location, name string
}

func (c gkeCluster) workloadIdentityPool() string { return c.projectID + ".svc.id.goog" }

func (c gkeCluster) identityNamespace() string {
	return fmt.Sprintf("identitynamespace:%s:https://container.googleapis.com/v1/projects/%s/locations/%s/clusters/%s",
		c.workloadIdentityPool(), c.projectID, c.location, c.name)
}

// gkeCluster reads the cluster from the metadata server once, lazily: a
// controller outside GKE never asks unless an object needs it.
func (p *Provider) gkeCluster(ctx context.Context) (gkeCluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cluster != nil {
		return *p.cluster, nil
	}
	client := metadata.NewClient(nil)
	var c gkeCluster
	for _, f := range []struct {
		what, path string
		into       *string
	}{
		{"project ID", "project/project-id", &c.projectID},
		{"location", "instance/attributes/cluster-location", &c.location},
		{"name", "instance/attributes/cluster-name", &c.name},
	} {
		v, err := client.GetWithContext(ctx, f.path)
		if err != nil {
			return c, fmt.Errorf("failed to get GKE cluster %s from the metadata service: %w", f.what, err)
		}
		if v == "" {
			return c, fmt.Errorf("failed to get GKE cluster %s from the metadata service: empty value", f.what)
		}
		*f.into = v
	}
	p.cluster = &c
	return c, nil
}
