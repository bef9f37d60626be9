/* src/mca/pstrg/base/static-components.h: the pstrg components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pstrg_base_static_components[] = {NULL};
