"""Linear attention without decay: S_t = S_{t-1} + k_t v_t^T, z_t = z_{t-1} + k_t,
o_t = S_t^T q_t / q_t.z_t, the article's "never forgets". The keys here are features phi(k)
(the state tab writes phi(k) with its feature map). RetNet and GLA are this state with a decay."""

from .. import WRITES_FEATURES

STATE_KIND = "linear"
WRITES = WRITES_FEATURES
YEAR = 2020  # the paper: Katharopoulos et al., Transformers are RNNs
BESIDE_SOFTMAX = False  # its map is the maps tab's elu+1 map, drawn there already
