// Package shop is a WebShop-like shopping environment: an agent reads an
// instruction ("i need a machine washable blanket in navy blue, queen size,
// and price lower than 60.00 dollars"), searches a generated catalogue,
// pages through results, opens items, picks options and buys.
//
// The catalogue (products over 24 product types in 6 categories, grouped in
// families of near-duplicates that share brand, title and type but differ in
// attributes, options and price) and its BM25 index are generated
// deterministically from a fixed seed and shared by every environment with
// the same configuration. Goals are indexed: goals 0–499 form the eval
// split, the rest the train split. Each goal names a target product's type,
// a subset of its attributes, values for some of its option dimensions and
// a price limit; the episode is fully determined by the goal index
// (Task.Seed) and the actions.
//
// Pages and actions follow WebShop: the search page offers search[query]
// for a handful of candidate queries built from the instruction; results
// show 10 items a page with click[item id], click[next >], click[< prev] and
// click[back to search]; an item page offers click[option value],
// click[description], click[features], click[reviews] and click[buy now].
//
// Buying ends the episode with WebShop's reward
//
//	r = r_type × (|matched attributes| + |matched options| + 1[price ≤ limit]) / (|attributes| + |options| + 1)
//
// and success means r = 1; see reward.go for the exact rules. Running into
// the step limit (15 by default) without buying scores 0. With the option
// reward=success the outcome reward an episode pays is 1 for a success and
// 0 otherwise, as verl-agent (the GiGPO paper's framework) trains WebShop;
// the graded score is still reported (Episode.Score, envs.Scorer).
//
// Options (envs.New("shop", opts) or ParseOptions): preset ("standard",
// the default, or "easy": fewer near-duplicates and candidate queries,
// fewer attributes and option values per instruction, 20 steps),
// max_steps, catalogue_size, goals, near_duplicates, queries,
// goal_attributes, goal_options and reward ("score", the default, or
// "success"); an unknown key or a bad value is a ConfigError naming it.
// The Env implements envs.Planner: its expert sees the target and solves
// every goal of every split.
//
// The package registers itself as "shop" with envs.Register; import it for
// its side effect or call New directly.
package shop
