/* pb/nbest.h - a search's result: the 1-best or an n-best list following Moses' trellis paths (every complete
 * hypothesis, then deviations through the arcs recombination kept). The result holds its own strings and feature
 * values (recomputed along each path from the model, so every printed n-best entry rescores to its values); the
 * model score of an entry is their weighted sum. */
#ifndef SMTBENCH_PB_NBEST_H
#define SMTBENCH_PB_NBEST_H

#include "pb/hyp.h"

/* CFFI-BEGIN */
typedef struct sb_pb_result sb_pb_result;
int sb_pb_result_size(const sb_pb_result *r);       /* entries, best first; 0 for an empty sentence */
/* target words of entry i; with segmentation each phrase is followed by |start-end| */
const char *sb_pb_result_text(const sb_pb_result *r, int i, int segmentation);
void sb_pb_result_features(const sb_pb_result *r, int i, double *features); /* SB_PB_NFEAT values */
double sb_pb_result_total(const sb_pb_result *r, int i);  /* weighted sum of the features */
double sb_pb_result_search_score(const sb_pb_result *r, int i); /* the score the search kept */
void sb_pb_result_free(sb_pb_result *r);
/* CFFI-END */

/* Build a result from the complete hypotheses `finals` (n of them, any order). */
int sb_pb_make_result(const sb_pb_sentence *s, sb_pb_hyp **finals, int n, int nbest, sb_pb_result **out);
/* Entry i's last source phrase end (-1: empty); add `value` to its feature `feature` (the total follows), for
 * feature values a search charges beyond sb_pb_path_features (e.g. a sentence-final distortion jump). */
int sb_pb_result_last_end(const sb_pb_result *r, int i);
void sb_pb_result_add_feature(sb_pb_result *r, const sb_pb_model *m, int i, int feature, double value);

#endif
