/* src/mca/prm/base/static-components.h: the prm components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_prm_default_component;
const pmix_mca_base_component_t *pmix_mca_prm_base_static_components[] = {
    &pmix_mca_prm_default_component, NULL};
