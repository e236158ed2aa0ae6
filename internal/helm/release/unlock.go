package release

import (
	"fmt"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
)

// Unlock marks the newest revision failed when an action died leaving it
// pending (pending-install, pending-upgrade, pending-rollback), which is
// what blocks every later Helm action with "another operation
// (install/upgrade/rollback) is in progress". It returns the status the
// release was stuck in, empty when it was not pending.
func (c *Client) Unlock() (rcommon.Status, error) {
	rls, err := c.cfg.Releases.Last(c.opts.Name)
	if err != nil {
		return "", fmt.Errorf("reading release %s from storage: %w", c.opts.Name, err)
	}
	rel, err := toV1(rls)
	if err != nil || rel == nil || rel.Info == nil || !rel.Info.Status.IsPending() {
		return "", err
	}
	stuck := rel.Info.Status
	rel.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Release unlocked from stale '%s' state", stuck))
	if err := c.cfg.Releases.Update(rel); err != nil {
		return stuck, fmt.Errorf("unlocking release %s: %w", c.opts.Name, err)
	}
	return stuck, nil
}

// MarkFailed marks rel, a revision an action just wrote as deployed,
// failed in storage with description: what Helm itself records when its
// wait fails, for a wait weir runs after Helm's (spec.healthCheckExprs).
func (c *Client) MarkFailed(rel *releasev1.Release, description string) error {
	rel.SetStatus(rcommon.StatusFailed, description)
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("marking release %s failed: %w", c.opts.Name, err)
	}
	return nil
}
