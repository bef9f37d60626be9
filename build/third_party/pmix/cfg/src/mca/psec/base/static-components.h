/* src/mca/psec/base/static-components.h: the psec components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_psec_native_component;
extern const pmix_mca_base_component_t pmix_mca_psec_none_component;
const pmix_mca_base_component_t *pmix_mca_psec_base_static_components[] = {
    &pmix_mca_psec_native_component, &pmix_mca_psec_none_component, NULL};
