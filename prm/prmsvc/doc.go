// Package prmsvc wires the process reward model of package prm to the bus:
// a NATS micro service that scores trajectories on rspo.<run>.prm.score and
// reloads when a new version is published, publishing a model (object store
// plus a prm.published control event), collecting training trajectories from
// recorded runs, and refreshing the PRM from a run's own streams each cycle.
//
// # Scoring protocol
//
// Request (subject rspo.<run>.prm.score): an Arrow IPC stream of one or more
// trajectories, exactly as schemas.EncodeTrajectoryBatch (or, for one,
// schemas.EncodeTrajectory) writes it. Each trajectory must pass
// schemas validation; only the instruction and each step's observation and
// action are used.
//
// Reply: JSON (Content-Type application/json), a ScoreReply:
//
//	{"prm_version": 3, "info": {...}, "scores": [[r̂_0, r̂_1, ...], ...], "totals": [R̂, ...]}
//
// scores[i][t] is r̂_t of step t of trajectory i, totals[i] = Σ_t scores[i][t];
// info is the model's prm.ModelInfo (held-out AUC etc.), so a remote
// explorer can gate its shaping with info.ShapingEnabled.
// If the service was started with noise σ > 0, scores carry it.
//
// Errors come back as micro error replies: the headers Nats-Service-Error-Code
// ("400" for a request that does not decode or validate, "500" for a failure
// of the service) and Nats-Service-Error (the reason), with an empty body.
// Client turns them into a *ServiceError that matches ErrBadRequest or
// ErrServer with errors.Is.
package prmsvc
