// Package advise turns results with several GC policies into the one
// policy to set: the calmest tail whose median is not worse than
// default's and whose memory lasts the job within its memory limit, how to
// set it in the user's stack, and, where the memory or a constraint rules
// a calmer tail out, which constraint binds and what would relax it.
//
// The verdicts are the comparison's (results.CompareVariants against the
// reference variant); advise adds the decision, not statistics of its
// own. Memory is judged on the worst run: a policy that runs out in one
// run of four runs out in the job. docs/policy.md tells the whole story.
package advise
